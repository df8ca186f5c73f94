"""A real headless browser for page tests: Debian's chromium driven by Playwright, no browser download."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

INSTALL = "apt-get update && apt-get install -y chromium (as root; `make install` does it where apt is)"
#: Set to write the screenshots the docs show (docs/images/) while the tests run.
DOCS_SCREENSHOTS = os.environ.get("KINEGRAPH_DOCS_SCREENSHOTS") == "1"
DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"


def chromium_path() -> str:
    """The system chromium, or a skip that says how to install it."""
    found = (
        os.environ.get("KINEGRAPH_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    )
    if not found:
        pytest.skip(f"no chromium on PATH; install it: {INSTALL}")
    return found


@contextmanager
def browser_page(width: int = 1400, height: int = 900) -> Iterator[Any]:
    """A fresh page in headless chromium that may reach nothing but loopback."""
    playwright_api = pytest.importorskip(
        "playwright.sync_api", reason="pip install playwright (the dev extra)"
    )
    executable = chromium_path()
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            outside: list[str] = []
            page.on("request", lambda r: None if _loopback(r.url) else outside.append(r.url))
            page.outside_requests = outside
            yield page
        finally:
            browser.close()


def _loopback(url: str) -> bool:
    return url.startswith(("http://127.0.0.1", "http://localhost", "data:", "blob:", "about:"))


def screenshot(page: Any, tmp_path: Path, name: str) -> Path:
    """A PNG of the page in `tmp_path` (and in docs/images/ under KINEGRAPH_DOCS_SCREENSHOTS=1)."""
    path = tmp_path / name
    page.screenshot(path=str(path), full_page=False)
    if DOCS_SCREENSHOTS:
        DOCS_IMAGES.mkdir(exist_ok=True)
        shutil.copyfile(path, DOCS_IMAGES / name)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return path
