"""Issue 13 in a real browser: the metric filter, each point's environment and
what changed, and the backends side by side (Debian's Chromium via Playwright;
skipped with the reason when none is found, like tests/test_site_browser.py)."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from bench import cli
from bench.commands.serve import make_server
from tests.helpers import T0, chromium, make_record, ok, write_data
from tests.test_metric_series import gpu_env, latency

pytestmark = pytest.mark.slow  # a real browser: ~10 s for the module

CHROMIUM, WHY_NOT = chromium()
if CHROMIUM is None:
    pytest.skip(WHY_NOT, allow_module_level=True)

from playwright.sync_api import sync_playwright  # noqa: E402

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def records():
    """Six nights of jax and torch on one GPU; jax's driver changes on the last night."""
    out = []
    for i in range(6):
        driver = "575.51.02" if i == 5 else "570.86.10"
        for backend, p50, tput in (("jax", 1.0, 1000.0), ("torch", 2.0, 800.0)):
            out.append(make_record([ok("cnn", "train", tput + i), latency("cnn", p50 + 0.01 * i, 2 * p50)],
                                   backend=backend, device="rtx", started_at=T0 + timedelta(days=i),
                                   environment=gpu_env(driver=driver if backend == "jax" else "570.86.10")))
    return out


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    root = tmp_path_factory.mktemp("metrics-site")
    write_data(records(), root / "data")
    assert cli.main(["site", "--data", str(root / "data"), "--out", str(root / "site"), "--no-plots"]) == 0
    server = make_server(root / "site", "127.0.0.1", 0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def page(url):
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        pg = browser.new_page(viewport={"width": 1280, "height": 900})
        errors = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(url)
        pg.wait_for_selector("html[data-ready=all]", timeout=15000)
        yield pg
        assert errors == []
        browser.close()


def modes(page):
    return sorted(page.locator("#series-table tbody tr td:nth-child(4)").all_inner_texts())


def test_the_table_opens_on_throughput_and_the_metric_filter_shows_the_rest(page):
    assert page.locator("#filter-metric").input_value() == "throughput"
    assert modes(page) == ["train", "train"]
    page.select_option("#filter-metric", "latency")
    assert modes(page) == ["latency", "latency", "latency.p99", "latency.p99"]
    page.select_option("#filter-metric", "memory")
    assert modes(page) == ["latency.host-memory"] * 2  # CPU-style records: no device memory
    page.select_option("#filter-metric", "throughput")


def test_a_points_tooltip_shows_that_nights_environment_and_what_changed(page):
    page.select_option("#filter-metric", "latency")
    page.locator("#series-table tbody tr").filter(has_text="jax").filter(
        has=page.locator("td:nth-child(4)", has_text="latency.p99")).click()
    box = page.locator("#detail-chart .u-over").bounding_box()
    page.mouse.move(box["x"] + box["width"] - 3, box["y"] + box["height"] * 0.5)  # the newest point
    assert "changed since the previous point: driver" in page.locator("#tooltip").inner_text()
    page.mouse.click(box["x"] + box["width"] - 3, box["y"] + box["height"] * 0.5)
    pinned = page.locator("#detail-point").inner_text()
    assert "GPU: RTX 5070 Ti, SM 2452 MHz, mem 14001 MHz, 50 °C, throttle: none" in pinned
    assert "driver: 575.51.02, CUDA 12.8, cuDNN 91002" in pinned
    assert "changed since the previous point: driver 570.86.10 → 575.51.02" in pinned
    page.mouse.click(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)  # a night like the one before
    assert "nothing changed since the previous point" in page.locator("#detail-point").inner_text()
    page.select_option("#filter-metric", "throughput")


def test_backends_side_by_side_best_first_with_spread(page):
    page.select_option("#backends-device", "rtx")
    page.select_option("#backends-series", "cnn · latency")
    rows = page.locator("#backends-table tbody tr")
    assert rows.count() == 2
    # latency: smaller is better, so jax (1.05 ms) before torch (2.05 ms); samples 0.9/1/1.1/1.3 x p50
    assert rows.nth(0).locator("td").all_inner_texts()[:3] == ["jax", "1.05 ms", "31.0%"]
    assert rows.nth(1).locator("td").all_inner_texts()[0] == "torch"
    assert rows.nth(0).locator(".whisker").count() == 1
    page.select_option("#backends-series", "cnn · train")
    assert [rows.nth(i).locator("td").first.inner_text() for i in range(2)] == ["jax", "torch"]  # bigger first
