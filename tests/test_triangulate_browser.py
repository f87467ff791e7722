"""The dashboard shows whose change it is and its triage mark, in a real
browser (skipped, like tests/test_site_browser.py, without Chromium)."""

import threading

import pytest

from bench import cli
from bench.commands.serve import make_server
from bench.records import triage
from tests.test_site_browser import ARGS, CHROMIUM  # noqa: F401  (skips this module without Chromium)
from tests.test_triangulate import STEP_DAY, device_change  # noqa: F401  (the fixture)

pytestmark = pytest.mark.slow

from playwright.sync_api import sync_playwright  # noqa: E402


def test_the_detail_names_the_class_and_the_mark(device_change, tmp_path_factory):
    from bench.analyse.series import build_series
    from bench.records.history import load_history
    s = build_series(load_history(device_change).records)[("jax", "gpu-a", "cnn", "train")]
    night = s.points[STEP_DAY].day.isoformat()
    triage.write(device_change, [triage.Mark("jax/gpu-a/cnn/train", night, "acknowledged", 7,
                                             "https://github.com/o/r/issues/7", "https://example.org/why")])
    out = tmp_path_factory.mktemp("site")  # outside the data folder
    assert cli.main(["site", "--data", str(device_change), "--out", str(out), "--no-plots"]) == 0
    server = make_server(out, "127.0.0.1", 0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"http://127.0.0.1:{server.server_address[1]}/")
            page.wait_for_selector("html[data-ready=all]", timeout=15000)
            row = (page.locator("#series-table tbody tr")
                   .filter(has=page.locator("td:nth-child(1)", has_text="jax"))
                   .filter(has=page.locator("td:nth-child(2)", has_text="gpu-a"))
                   .filter(has=page.locator("td:nth-child(3)", has_text="cnn"))
                   .filter(has=page.locator("td:nth-child(4)", has_text="train")))
            assert "device gpu-a" in row.inner_text()
            row.click()
            summary = page.locator("#detail-summary").inner_text()
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    assert errors == []
    assert "whose change: device gpu-a: 1 of 5 other cells moved" in summary
    assert f"triage: acknowledged #7 (change of {night}) https://example.org/why" in summary
