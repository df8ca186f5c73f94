"""Virtual environments the install tests build once and keep under .venv-extras/ (gitignored), in a
folder named by a hash of pyproject.toml, so that a changed dependency list builds afresh."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def cache_root() -> Path:
    """`.venv-extras/<hash of pyproject.toml>` (KINEGRAPH_VENV_CACHE overrides the parent folder)."""
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:12]
    return Path(os.environ.get("KINEGRAPH_VENV_CACHE", ROOT / ".venv-extras")) / digest


def announcer(config: pytest.Config) -> Callable[[str], None]:
    """Print a line past pytest's output capture, as its logging does (a build takes a minute or more)."""
    capture = config.pluginmanager.get_plugin("capturemanager")

    def say(line: str) -> None:
        with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
            print(f"\n{line}", flush=True)

    return say


def cached_venv(name: str, fill: Callable[[Path], None], say: Callable[[str], None] = print) -> Path:
    """The venv `name` under cache_root(), made with `fill(python)` the first time (saying so through
    `say`); its interpreter.

    A build that fails leaves nothing behind; one that succeeds is marked complete, so a half-built venv is
    never reused.
    """
    folder = cache_root() / name
    python = folder / "bin" / "python"
    if (folder / ".complete").exists():
        return python
    shutil.rmtree(folder, ignore_errors=True)
    say(f"== building the {name} test environment in {folder}")
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    try:
        fill(python)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    (folder / ".complete").touch()
    return python


def pip(python: Path, *args: str) -> None:
    """`pip install --quiet ARGS` into the venv of `python`."""
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *args], check=True
    )


def overlay(python: Path) -> None:
    """Let the venv of `python` see this interpreter's packages and the source tree after its own, so that
    a package installed into it (an older SDK) shadows the one this interpreter has."""
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = [p for p in sys.path if p.endswith("site-packages")] + [str(ROOT / "src"), str(ROOT)]
    (Path(site) / "zz_outer.pth").write_text("\n".join(ours) + "\n")
