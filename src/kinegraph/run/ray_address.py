"""Check a `--ray HOST:PORT` address before Ray is asked to join it.

`ray.init(address=...)` retries an address with nothing listening for minutes before it gives up, so a
mistyped port would look like a hung run. A plain TCP connect answers at once: a refused (or silent)
address is a mistake on the command line, refused in one line before a run directory is made.
"""

from __future__ import annotations

import socket

from kinegraph.errors import UsageError

#: Seconds a TCP connect to the cluster address may take before nothing is taken to be listening there.
PROBE_TIMEOUT_S = 3.0
#: The Ray client's scheme (`ray://HOST:10001`); its server is a TCP port too, probed the same way.
CLIENT_SCHEME = "ray://"
#: Addresses Ray resolves itself (the cluster started on this machine, a new local instance).
UNPROBED = ("auto", "local")

NOTHING_LISTENING = "nothing is listening there (start a cluster with `ray start --head` or drop --ray)"


def split_address(address: str) -> tuple[str, int]:
    """(host, port) of `HOST:PORT`, `[IPv6]:PORT` or `ray://HOST:PORT`; a one-line UsageError otherwise."""
    host, sep, port = address.removeprefix(CLIENT_SCHEME).rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port:
        raise UsageError(
            f"--ray {address}: expected HOST:PORT (e.g. 10.0.0.1:6379), 'auto', or ray://HOST:PORT"
        )
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--ray {address}: port {port!r} is not a number from 1 to 65535")
    return host, int(port)


def probe_address(address: str | None) -> None:
    """Refuse an explicit cluster address that is malformed or where nothing accepts a TCP connection.

    None (a local instance), `auto`, `local` and schemes other than `ray://` are Ray's to resolve. Ray
    joins `127.0.0.1:PORT` through this machine's own IP; its GCS and client server listen on every
    interface, so the address as typed answers whenever the one Ray uses does.
    """
    if address is None or address in UNPROBED:
        return
    if "://" in address and not address.startswith(CLIENT_SCHEME):
        return
    host, port = split_address(address)
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
            pass
    except socket.gaierror:
        raise UsageError(f"--ray {address}: unknown host {host!r}") from None
    except OSError:  # refused, or no answer within PROBE_TIMEOUT_S
        raise UsageError(f"--ray {address}: {NOTHING_LISTENING}") from None
