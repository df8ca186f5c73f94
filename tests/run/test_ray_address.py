"""`--ray HOST:PORT` is checked with a TCP connect before Ray joins it: a closed port or a malformed
address is refused in one line (exit 2) before any run directory is made; a listening port goes on to
`ray.init`, whose own error path answers for a server that is not Ray."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kinegraph.cli import app
from kinegraph.errors import UsageError
from kinegraph.run.ray_address import probe_address, split_address
from tests.support.run_data import write_egodyn_world

NOTHING = "nothing is listening there (start a cluster with `ray start --head` or drop --ray)"


@pytest.fixture
def closed_port() -> int:
    """A port nothing listens on: bound by this test, then closed."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def listening_port() -> Iterator[int]:
    """A TCP port on every interface (Ray joins 127.0.0.1 through the machine's own IP) that accepts
    connections and never speaks Ray's protocol."""
    with socket.socket() as sock:
        sock.bind(("", 0))
        sock.listen(16)
        yield sock.getsockname()[1]


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_egodyn_world(tmp_path_factory.mktemp("egodyn"), n_clips=1)


def refusal(address: str | None) -> str | None:
    """The probe's one-line refusal of `address`, or None where it lets the address through."""
    try:
        probe_address(address)
    except UsageError as exc:
        return str(exc)
    return None


def run_args(data: Path, out: Path, address: str) -> list[str]:
    return ["run", "egodyn", "--graph", "egodyn.oracle", "--data", str(data), "--out", str(out)] + [
        "--no-progress",
        "--ray",
        address,
    ]


def one_error_line(result) -> str:
    """The single stderr line of a refused command (exit 2, no traceback)."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.stderr
    return lines[0]


def test_split_address_reads_host_and_port_of_every_form():
    assert split_address("10.0.0.1:6379") == ("10.0.0.1", 6379)
    assert split_address("head-node:6379") == ("head-node", 6379)
    assert split_address("ray://10.0.0.1:10001") == ("10.0.0.1", 10001)
    assert split_address("[::1]:6379") == ("::1", 6379)


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("10.0.0.1", "--ray 10.0.0.1: expected HOST:PORT (e.g. 10.0.0.1:6379), 'auto', or ray://HOST:PORT"),
        ("10.0.0.1:", "--ray 10.0.0.1:: expected HOST:PORT"),
        (":6379", "--ray :6379: expected HOST:PORT"),
        ("ray://10.0.0.1", "--ray ray://10.0.0.1: expected HOST:PORT"),
        ("10.0.0.1:port", "--ray 10.0.0.1:port: port 'port' is not a number from 1 to 65535"),
        ("10.0.0.1:70000", "--ray 10.0.0.1:70000: port '70000' is not a number from 1 to 65535"),
        ("10.0.0.1:0", "--ray 10.0.0.1:0: port '0' is not a number from 1 to 65535"),
    ],
)
def test_a_malformed_address_is_refused_in_one_line(address: str, expected: str):
    line = refusal(address)
    assert line is not None and line.startswith(expected) and "\n" not in line


def test_a_closed_port_is_refused_and_a_listening_one_passes(closed_port: int, listening_port: int):
    assert refusal(f"127.0.0.1:{closed_port}") == f"--ray 127.0.0.1:{closed_port}: {NOTHING}"
    assert refusal(f"ray://127.0.0.1:{closed_port}") == f"--ray ray://127.0.0.1:{closed_port}: {NOTHING}"
    assert refusal(f"127.0.0.1:{listening_port}") is None
    assert refusal(f"ray://localhost:{listening_port}") is None


def test_addresses_ray_resolves_itself_are_not_probed():
    # none but the last is HOST:PORT: probed, they would be refused as malformed like it
    addresses = [None, "auto", "local", "anyscale://my-cluster", "my-cluster"]
    assert [refusal(a) for a in addresses] == [None, None, None, None] + [
        "--ray my-cluster: expected HOST:PORT (e.g. 10.0.0.1:6379), 'auto', or ray://HOST:PORT"
    ]


def test_an_unknown_host_is_named():
    assert refusal("no-such-host.invalid:6379") == (
        "--ray no-such-host.invalid:6379: unknown host 'no-such-host.invalid'"
    )


def test_run_with_nothing_listening_is_one_line_and_leaves_no_run_directory(
    data: Path, tmp_path: Path, closed_port: int
):
    out = tmp_path / "run"
    result = CliRunner().invoke(app, run_args(data, out, f"127.0.0.1:{closed_port}"), prog_name="kinegraph")
    assert one_error_line(result) == f"error: --ray 127.0.0.1:{closed_port}: {NOTHING}"
    assert not out.exists()


def test_run_with_a_port_that_is_not_a_number_is_one_line(data: Path, tmp_path: Path):
    out = tmp_path / "run"
    result = CliRunner().invoke(app, run_args(data, out, "127.0.0.1:6379x"), prog_name="kinegraph")
    line = one_error_line(result)
    assert line == "error: --ray 127.0.0.1:6379x: port '6379x' is not a number from 1 to 65535"
    assert not out.exists()


def test_sweep_with_nothing_listening_is_one_line_and_runs_nothing(
    data: Path, tmp_path: Path, closed_port: int
):
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(f"benchmarks: {{egodyn: {{data: '{data}'}}}}\ngraphs: [egodyn.oracle]\n")
    out = tmp_path / "sweep"
    address = f"127.0.0.1:{closed_port}"
    result = CliRunner().invoke(
        app, ["sweep", str(sweep), "--out", str(out), "--ray", address], prog_name="kinegraph"
    )
    assert one_error_line(result) == f"error: --ray {address}: {NOTHING}"
    assert not out.exists()


@pytest.mark.slow
def test_a_listening_server_that_is_not_ray_goes_on_to_ray_init(
    data: Path, tmp_path: Path, listening_port: int
):
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'kinegraph[ray]')")
    # Ray's own connect would retry for minutes; these shorten it to one attempt of a few seconds
    env = {
        **os.environ,
        "RAY_gcs_server_port_wait_time_s": "1",
        "RAY_py_gcs_connect_timeout_s": "2",
        "RAY_gcs_rpc_server_connect_timeout_s": "1",
    }
    out = tmp_path / "run"
    address = f"127.0.0.1:{listening_port}"
    result = subprocess.run(
        [sys.executable, "-m", "kinegraph.cli", *run_args(data, out, address)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [errors[0]] and errors[0].startswith(f"error: --ray {address}: Failed to connect to Ray")
    assert NOTHING not in result.stderr
    assert not (out / "run.json").exists()
