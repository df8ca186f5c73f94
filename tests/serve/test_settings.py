"""API keys from the environment and a file, and the refusal to listen beyond loopback without keys."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kinegraph.cli import app
from kinegraph.serve.settings import ServeSettings, check_bind, is_loopback, load_api_keys


def test_keys_come_from_the_env_var_and_the_file(tmp_path):
    keys_file = tmp_path / "keys"
    keys_file.write_text("# team keys\nalpha\n\n  beta  # laptop\n")
    assert load_api_keys(None, {"KINEGRAPH_API_KEYS": " one, two ,,"}) == {"one", "two"}
    assert load_api_keys(keys_file, {}) == {"alpha", "beta"}
    assert load_api_keys(keys_file, {"KINEGRAPH_API_KEYS": "one"}) == {"one", "alpha", "beta"}
    assert load_api_keys(None, {}) == frozenset()
    with pytest.raises(ValueError, match="cannot read the API keys file"):
        load_api_keys(tmp_path / "missing", {})


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1"])
def test_loopback_hosts(host):
    assert is_loopback(host)
    check_bind(host, ServeSettings())


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.4", "::", "example.com"])
def test_no_keys_no_public_bind(host):
    assert not is_loopback(host)
    with pytest.raises(ValueError, match=f"refusing to listen on {host}: no API keys"):
        check_bind(host, ServeSettings())
    check_bind(host, ServeSettings(api_keys=frozenset({"k"})))


def test_cli_refuses_a_public_bind_without_keys(monkeypatch):
    monkeypatch.delenv("KINEGRAPH_API_KEYS", raising=False)
    result = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "refusing to listen on 0.0.0.0" in result.output and "KINEGRAPH_API_KEYS" in result.output
    result = CliRunner().invoke(app, ["serve", "--api-keys-file", "/nonexistent/keys"])
    assert result.exit_code == 2 and "cannot read the API keys file" in result.output


def test_cli_serve_help_lists_the_limits():
    result = CliRunner().invoke(app, ["serve", "--help"])
    assert result.exit_code == 0
    for option in ("--data-root", "--api-keys-file", "--max-frames", "--timeout", "--concurrency", "--queue"):
        assert option in result.output


def test_model_options_reach_the_served_backend():
    """`serve --model scripted:fixed --model-option responses=[...]`: the scripted model answers."""
    import httpx

    from tests.support.serving import AUTH, TURN, TURN_OPTIONS, png_bytes, running

    image = "data:image/png;base64," + __import__("base64").b64encode(png_bytes()).decode()
    settings = {"model_options": {"responses": ["right"]}, "graphs": ("egodyn.vision",)}
    with running("scripted:fixed", **settings) as server:
        r = httpx.post(
            server.url + "/v1/qa",
            headers=AUTH,
            json={"question": TURN, "options": TURN_OPTIONS, "images": [image]},
        )
    assert r.status_code == 200 and r.json()["answer"] == "right" and r.json()["model"] == "scripted:fixed"
