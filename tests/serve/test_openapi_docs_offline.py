"""`/docs` of `kinegraph serve` works offline: the page and every asset it references come from the
loopback server, none names another host, and in headless chromium the operations render with no
request leaving loopback."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest

from tests.support.browser import browser_page, screenshot
from tests.support.serving import running

EXTERNAL = re.compile(r"https?://(?!127\.0\.0\.1|localhost)[\w.-]+")


class References(HTMLParser):
    """The src / href attributes of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found += [value for name, value in attrs if name in ("src", "href") and value]


def test_docs_and_every_asset_it_references_are_local():
    with running(None) as server:
        page = httpx.get(f"{server.url}/docs", timeout=30)
        assert page.status_code == 200 and "swagger-ui" in page.text
        assert EXTERNAL.findall(page.text) == []
        parser = References()
        parser.feed(page.text)
        assets = parser.found
        assert {Path(a).name for a in assets} >= {
            "swagger-ui-bundle.js",
            "swagger-ui.css",
            "favicon-32x32.png",
        }
        for asset in assets:
            assert asset.startswith("/"), asset
            answer = httpx.get(f"{server.url}{asset}", timeout=30)
            assert answer.status_code == 200 and len(answer.content) > 500, asset
        assert httpx.get(f"{server.url}/openapi.json", timeout=30).json()["paths"]
        assert httpx.get(f"{server.url}/redoc", timeout=30).status_code == 404  # not offered: not shipped


@pytest.mark.slow
def test_docs_render_in_a_browser_without_the_network(tmp_path):
    with running(None) as server, browser_page(width=1400, height=900) as page:
        page.goto(f"{server.url}/docs")
        page.wait_for_selector(".opblock-summary-path", timeout=30_000)
        paths = page.locator(".opblock-summary-path").all_inner_texts()
        assert "/v1/qa" in paths and "/healthz" in paths
        assert page.locator(".errors-wrapper").count() == 0
        screenshot(page, tmp_path, "serve-docs.png")
        assert page.outside_requests == []
