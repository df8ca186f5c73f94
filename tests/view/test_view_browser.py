"""`kinegraph view` in a real headless chromium: the list, the filters, one sample's detail with its
frames decoded from the media, and nothing fetched from outside loopback."""

from __future__ import annotations

import pytest

from kinegraph.view import ViewServer, load_views
from tests.support.browser import browser_page, screenshot

pytestmark = pytest.mark.slow


def rows(page) -> list[str]:
    return page.locator("#list-body tr").evaluate_all("rows => rows.map(r => r.dataset.sample)")


def test_browse_filter_and_open_a_sample(two_runs, tmp_path):
    with ViewServer(load_views(two_runs)) as server, browser_page() as page:
        page.goto(server.url)
        page.wait_for_selector("body[data-ready=yes]")
        assert len(rows(page)) == 6 and page.inner_text("#count") == "6 of 6 samples"

        page.select_option("#question", "speed_change")
        assert rows(page) == [f"clip_{c:02d}/speed_change" for c in range(3)]
        page.select_option("#status", "parse_failure")
        assert rows(page) == ["clip_02/speed_change"]
        page.select_option("#question", "")
        page.select_option("#status", "")
        page.check("#disagree")
        assert rows(page) == [f"clip_{c:02d}/yaw_rate_turn_direction" for c in range(2)]
        page.uncheck("#disagree")

        page.click("tr[data-sample='clip_01/yaw_rate_turn_direction']")
        tools = page.locator(".run[data-run='1']")
        assert tools.locator(".answer").inner_text() == "left" and "ok" in tools.locator(
            ".answer"
        ).get_attribute("class")
        vision = page.locator(".run[data-run='0']")
        assert vision.locator(".answer").inner_text() == "right"
        assert "wrong" in vision.locator(".answer").get_attribute("class")
        assert "Readings: yaw 0.12 rad/s." in tools.locator(".prompt").inner_text()
        trace = tools.locator(".trace").inner_text()
        assert '"yaw_rate_rad_s": 0.123' in trace and "0.123456789" not in trace  # rounded for display
        assert tools.locator(".raw").inner_text() == "The vehicle is left."
        images = tools.locator(".frames img")
        assert images.count() == 3
        page.wait_for_function(
            "() => [...document.querySelectorAll('.frames img')].every(i => i.complete && i.naturalWidth > 0)"
        )
        assert tools.locator("figcaption").all_inner_texts() == ["#0 · 0 s", "#3 · 0.3 s", "#7 · 0.7 s"]
        screenshot(page, tmp_path, "view-sample.png")

        page.click("tr[data-sample='clip_02/speed_change']")
        assert page.locator(".run[data-run='0'] .status").inner_text() == "parse_failure"
        assert "no label in the answer" in page.locator(".run[data-run='0'] .error").inner_text()
        page.select_option("#status", "parse_failure")
        screenshot(page, tmp_path, "view-filtered.png")
        assert page.outside_requests == []
