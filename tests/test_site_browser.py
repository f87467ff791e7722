"""The dashboard in a real browser: Debian's Chromium driven by Playwright.

Builds the site with `python -m bench site` from a made-up history plus one
hostile series (labels, version, message and URL carrying HTML/JS), serves it
over http on 127.0.0.1 and checks what a visitor sees. Screenshots go to
test-artifacts/. Skipped, with the reason, only when no Chromium is found:
$BENCH_CHROMIUM, /usr/bin/chromium (.ci/run installs it) or Playwright's own
(scripts/test.sh installs it when Debian's is missing).
"""

from __future__ import annotations

import json
import os
import threading
from datetime import timedelta
from pathlib import Path

import pytest

from bench import cli

from bench.records import synthetic
from bench.commands.serve import make_server
from bench.present import markdown
from tests.helpers import T0, chromium, failed, make_record, ok, write_data

pytestmark = pytest.mark.slow  # a real browser: ~10-15 s for the module

# BENCH_CHROMIUM: another Chromium-based browser (e.g. google-chrome on ubuntu-latest);
# else Debian's, else Playwright's own (tests.helpers.chromium).
CHROMIUM, WHY_NOT = chromium()
if CHROMIUM is None:
    pytest.skip(WHY_NOT, allow_module_level=True)

from playwright.sync_api import sync_playwright  # noqa: E402

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"

# Each would set window.__pwned if the page ever treated it as markup or a link.
EVIL_BACKEND = '<img src=x onerror="window.__pwned=1">'
EVIL_DEVICE = '"><svg onload="window.__pwned=2">'
EVIL_VERSION = "<b>3.16</b><img src=y onerror=window.__pwned=3>"
EVIL_MESSAGE = "<script>window.__pwned=4</script> out of memory"
EVIL_URL = "javascript:window.__pwned=5"
DAYS = 30  # ends 2026-11-30: records after "now" (+26 h) are skipped by the readers


def evil_records():
    """Eight nights of one series with hostile strings, the last one a failure."""
    start = T0 + timedelta(days=DAYS - 12)
    recs = [make_record([ok("cnn", "train", 1000.0 + 10 * i)], backend=EVIL_BACKEND, device=EVIL_DEVICE,
                        started_at=start + timedelta(days=i), keras_version=EVIL_VERSION, url=EVIL_URL)
            for i in range(7)]
    recs.append(make_record([failed("cnn", "train", "oom", EVIL_MESSAGE)], backend=EVIL_BACKEND,
                            device=EVIL_DEVICE, started_at=start + timedelta(days=7),
                            keras_version=EVIL_VERSION, url=EVIL_URL))
    return recs


def step_records(end):
    """A series that drops 15 % five nights before `end`, a distinct nightly each
    night, on a host whose reference workload reads 15 % slower on those five."""
    start = end - timedelta(days=24)
    values = [1000.0, 1010.0, 995.0, 1005.0, 990.0] * 4 + [850.0, 855.0, 848.0, 852.0, 849.0]
    return [make_record([ok("mlp", "train", v, workers=[{"status": "ok", "value": v, "disturbed": False,
                                                         "reference_seconds": 0.0023 if i >= 20 else 0.0020}])],
                        backend="jax", device="step-box", started_at=start + timedelta(days=i),
                        keras_version=f"3.16.0.dev{(start + timedelta(days=i)):%Y%m%d}02")
            for i, v in enumerate(values)]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    data, out = root / "data", root / "site"
    end = T0 + timedelta(days=DAYS - 1)
    synthetic.write_history(data, DAYS, end=end, fail_rate=0.05)
    write_data(evil_records(), data)
    write_data(step_records(end), data)
    assert cli.main(["site", "--data", str(data), "--out", str(out), "--no-plots"]) == 0
    index = json.loads((out / "data" / "index.json").read_text(encoding="utf-8"))
    server = make_server(out, "127.0.0.1", 0, quiet=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", index
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, site, request):
    """A fresh page on the site, table rendered; fails the test on any page error."""
    url, _ = site
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    pg.on("console", lambda m: errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    pg.goto(url)
    pg.wait_for_selector("html[data-ready=all]", timeout=15000)
    yield pg
    ARTIFACTS.mkdir(exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / f"site-{request.node.name}.png"), full_page=True)
    pwned = pg.evaluate("window.__pwned")
    context.close()
    assert errors == []
    assert pwned is None


def column(page, n):
    return page.locator(f"#series-table tbody tr td:nth-child({n})").all_inner_texts()


def test_table_has_one_row_per_series_with_readme_columns(page, site):
    _, index = site
    assert len(index["series"]) == 6 * 4 + 2  # synthetic, the hostile one, the step
    assert page.locator("#series-table tbody tr").count() == len(index["series"])
    heads = page.locator("#series-table thead th").all_inner_texts()
    assert heads == list(markdown.HEADER)  # the README's columns, BACKEND↑ sorted first
    assert heads[:9] == ["BACKEND↑", "DEVICE", "MODEL", "MODE", "LATEST", "Δ PREV", "TREND", "RUNS", "STATUS"]
    first = index["series"][0]
    cells = page.locator("#series-table tbody tr").first.locator("td").all_inner_texts()
    assert cells == [first["backend"], first["device"], first["model"], first["mode"], first["latest_text"],
                     first["delta_text"], first["trend"], str(first["runs"]), first["status"], first["note"]]
    status = page.locator("#series-table tbody tr .badge").first
    assert status.evaluate("e => getComputedStyle(e).backgroundColor") != "rgba(0, 0, 0, 0)"


def test_hostile_labels_show_as_text_and_run_nothing(page):
    assert page.locator("img[src=x], img[src=y], svg[onload], script:not([src])").count() == 0
    row = page.locator("#series-table tbody tr").filter(has_text="window.__pwned=1")
    assert row.count() == 1
    assert row.locator("td").nth(0).inner_text() == EVIL_BACKEND
    assert row.locator("td").nth(1).inner_text() == EVIL_DEVICE
    assert page.locator("#filter-device option").all_inner_texts().count(EVIL_DEVICE) == 1
    row.click()
    detail = page.locator("#detail")
    assert detail.is_visible()
    assert page.locator("#detail-title").inner_text() == f"{EVIL_BACKEND} · {EVIL_DEVICE} · cnn · train"
    failures = page.locator("#detail-failures table tbody tr td").all_inner_texts()
    assert "oom" in failures and EVIL_VERSION in failures and EVIL_MESSAGE in failures
    # The run URL was javascript:, so there is no link to it anywhere.
    assert page.locator("a[href^='javascript']").count() == 0
    assert page.locator("#detail-links a").count() == 0
    page.locator("#overview-device").select_option(EVIL_DEVICE)
    assert page.locator("#multiples .card-title").all_inner_texts() == [f"{EVIL_BACKEND} · cnn · train"]
    assert page.locator("img[src=x], img[src=y], svg[onload]").count() == 0


def test_clicking_a_header_sorts_and_shows_the_arrow(page, site):
    _, index = site
    latest = page.locator("#series-table thead button", has_text="LATEST")
    latest.click()
    heads = page.locator("#series-table thead th").all_inner_texts()
    assert heads[0] == "BACKEND" and heads[4] == "LATEST↑"
    by_latest = sorted((s for s in index["series"] if s["latest"] is not None), key=lambda s: s["latest"])
    assert column(page, 5)[:len(by_latest)] == [s["latest_text"] for s in by_latest]
    latest.click()
    assert page.locator("#series-table thead th").nth(4).inner_text() == "LATEST↓"
    assert column(page, 5)[:len(by_latest)] == [s["latest_text"] for s in reversed(by_latest)]
    page.locator("#series-table thead button", has_text="DEVICE").click()
    devices = column(page, 2)
    assert devices == sorted(devices) and page.locator("#series-table thead th").nth(1).inner_text() == "DEVICE↑"


def test_filters_narrow_the_rows(page, site):
    _, index = site
    page.select_option("#filter-device", "rtx-5070-ti")
    assert set(column(page, 2)) == {"rtx-5070-ti"} and len(column(page, 2)) == 8
    page.select_option("#filter-backend", "torch")
    page.select_option("#filter-mode", "predict")
    assert column(page, 1) == ["torch", "torch"] and column(page, 4) == ["predict", "predict"]
    page.select_option("#filter-model", "mlp")
    assert column(page, 3) == ["mlp"]
    assert page.locator("#count").inner_text() == f"1 of {len(index['series'])} series"
    status = column(page, 9)[0]
    page.click("#filter-reset")
    page.select_option("#filter-status", status)
    assert set(column(page, 9)) == {status}
    assert len(column(page, 9)) == sum(s["status"] == status for s in index["series"])


def test_clicking_a_row_draws_its_chart_with_versions_and_failures(page, site):
    _, index = site
    s = next(s for s in index["series"] if s["failures"] and s["backend"] == "jax")
    name = " · ".join(s[k] for k in ("backend", "device", "model", "mode"))
    page.locator("#series-table tbody tr").filter(
        has=page.locator("td:nth-child(1)", has_text=s["backend"])).filter(
        has=page.locator("td:nth-child(2)", has_text=s["device"])).filter(
        has=page.locator("td:nth-child(3)", has_text=s["model"])).filter(
        has=page.locator("td:nth-child(4)", has_text=s["mode"])).click()
    assert page.locator("#detail-title").inner_text() == name
    canvas = page.locator("#detail-chart canvas")
    assert canvas.count() == 1
    inked = canvas.evaluate("""c => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n; }""")
    assert inked > 1000
    # Hover the chart: the tooltip names the keras-nightly version of that night.
    box = page.locator("#detail-chart .u-over").bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)
    tip = page.locator("#tooltip")
    assert tip.is_visible() and "keras-nightly 3.16.0.dev2026" in tip.inner_text()
    kinds = page.locator("#detail-failures .kind").all_inner_texts()
    assert sorted(kinds) == sorted(f[2] for f in s["failures"][-50:])
    run = page.locator("#detail-links a", has_text="newest CI run")
    assert run.get_attribute("href").startswith("https://github.com/example/keras-nightly-bench/actions/runs/")
    page.mouse.click(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)
    assert "keras-nightly 3.16.0.dev2026" in page.locator("#detail-point").inner_text()
    assert page.locator("#detail-point a").get_attribute("href").startswith("https://github.com/example/")


def test_overview_shows_every_series_of_a_device(page, site):
    _, index = site
    page.select_option("#overview-device", "apple-m4")
    cards = page.locator("#multiples .card")
    assert cards.count() == sum(s["device"] == "apple-m4" for s in index["series"]) == 4
    assert page.locator("#multiples canvas").count() == 4
    cards.nth(2).click()
    assert page.locator("#detail-title").inner_text().startswith("mlx · apple-m4 · ")


def test_a_link_with_the_series_in_its_hash_opens_that_chart(page, site):
    url, _ = site
    page.goto(url + "#backend=torch&device=rtx-5070-ti&model=mlp&mode=predict")
    page.wait_for_selector("#detail:not([hidden])", timeout=5000)  # same page: hashchange opens it
    assert page.locator("#detail-title").inner_text() == "torch · rtx-5070-ti · mlp · predict"
    assert page.locator("#detail-chart canvas").count() == 1
    page.click("#detail-close")
    assert not page.locator("#detail").is_visible() and page.evaluate("location.hash") == ""


def test_notes_wrap_between_words_and_are_never_clipped(page):
    notes = page.locator("#series-table tbody td.note")
    assert notes.count() > 0
    clipped = notes.evaluate_all("cells => cells.filter(c => c.scrollWidth > c.clientWidth + 1)"
                                 ".map(c => c.textContent)")
    assert clipped == []
    assert notes.first.evaluate("e => getComputedStyle(e).whiteSpace") == "normal"


BLUE_PIXELS = """() => {
  let n = 0;
  for (const c of document.querySelectorAll('canvas')) {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    for (let i = 0; i < d.length; i += 4) if (d[i] < 80 && d[i + 1] > 70 && d[i + 1] < 130 && d[i + 2] > 200) n++;
  }
  return n;
}"""


def test_opened_from_disk_a_one_point_series_shows_its_point(browser, tmp_path):
    """The Quick start opens .local/site/index.html from disk: file:// has no
    fetch(), the page reads data/index.js instead. One point is drawn as a dot."""
    data, out = tmp_path / "data", tmp_path / "site"
    write_data([make_record([ok("cnn", "train", 1234.0)], started_at=T0)], data)
    assert cli.main(["site", "--data", str(data), "--out", str(out), "--no-plots"]) == 0
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto((out / "index.html").as_uri())
    pg.wait_for_selector("html[data-ready=all]", timeout=15000)
    assert pg.locator("#error").is_hidden()
    assert pg.locator("#series-table tbody tr").count() == 1
    assert pg.locator(".badge").first.evaluate("e => getComputedStyle(e).color") != "rgb(0, 0, 0)"
    pg.wait_for_timeout(300)  # the small multiples draw after the table
    assert pg.evaluate(BLUE_PIXELS) > 0
    context.close()
    assert errors == []


def test_a_regressed_series_names_its_change_window(page, site):
    _, index = site
    s = next(s for s in index["series"] if s["device"] == "step-box")
    assert s["status"] == "Regressed"
    before, after = s["window"]["before"]["keras_version"], s["window"]["after"]["keras_version"]
    page.locator("#series-table tbody tr").filter(has=page.locator("td:nth-child(2)", has_text="step-box")).click()
    assert f"Keras {before} (" in page.locator("#detail-summary").inner_text()
    assert f") → {after} (" in page.locator("#detail-summary").inner_text()
    link = page.locator("#detail-links a", has_text="Keras commits in the change window")
    assert link.get_attribute("href").startswith("https://github.com/keras-team/keras/commits/master?since=")


def test_a_points_tooltip_says_how_fast_the_host_ran_that_night(page, site):
    _, index = site
    s = next(s for s in index["series"] if s["device"] == "step-box")
    assert s["host"] == [None] + [0] * 19 + [150] * 5  # tenths of a percent
    assert next(s for s in index["series"] if s["backend"] == EVIL_BACKEND)["host"] == []  # no readings
    page.locator("#series-table tbody tr").filter(has=page.locator("td:nth-child(2)", has_text="step-box")).click()
    box = page.locator("#detail-chart .u-over").bounding_box()
    tip = page.locator("#tooltip")
    page.mouse.move(box["x"] + box["width"] * 0.99, box["y"] + box["height"] * 0.5)  # one of the slow five
    assert "the host 15.0 % slower (reference workload), against the nights before" in tip.inner_text()
    page.mouse.move(box["x"] + box["width"] * 0.4, box["y"] + box["height"] * 0.5)  # before the drop
    assert "the host as before (reference workload +0.0 %), against the nights before" in tip.inner_text()
    # the five slow-host nights are ringed on the chart, and the key says what a ring is
    assert page.locator("#detail-chart canvas").evaluate(RING_PIXELS) > 0
    assert page.locator("#detail .key.host").is_visible()


def test_no_ring_and_no_host_key_without_host_readings(page, site):
    page.locator("#series-table tbody tr").filter(has=page.locator("td:nth-child(2)", has_text="step-box")).click()
    page.locator("#series-table tbody tr").filter(has=page.locator("td:nth-child(2)", has_text="apple-m4")).first.click()
    assert page.locator("#detail-chart canvas").evaluate(RING_PIXELS) == 0
    assert not page.locator("#detail .key.host").is_visible()


# The host ring's magenta (#c026d3, app.js HOST_RING): no other mark on a chart comes near it.
RING_PIXELS = """c => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0; for (let i = 0; i < d.length; i += 4)
      if (d[i] > 150 && d[i + 1] < 90 && d[i + 2] > 160 && d[i + 3] > 200) n++;
    return n; }"""


@pytest.mark.parametrize("over", ["http", "file"])
def test_a_chart_loads_its_whole_history_when_opened(browser, tmp_path, over):
    """The first download is the overview (the newest 90 nights); opening a
    chart loads that series' data/series/*.js, from disk as over http."""
    data, out = tmp_path / "data", tmp_path / "site"
    synthetic.write_history(data, 120, targets=(("jax", "cpu"),), end=T0, fail_rate=0)
    assert cli.main(["site", "--data", str(data), "--out", str(out), "--no-plots"]) == 0
    server = None
    if over == "http":
        server = make_server(out, "127.0.0.1", 0, quiet=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    errors, loaded = [], []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("request", lambda r: loaded.append(r.url.rsplit("/", 2)[-2:]))
    try:
        pg.goto(f"http://127.0.0.1:{server.server_address[1]}/" if server else (out / "index.html").as_uri())
        pg.wait_for_selector("html[data-ready=all]", timeout=15000)
        assert not [u for u in loaded if u[0] == "series"]  # nothing of the histories yet
        pg.locator("#series-table tbody tr").first.click()
        first = (T0 - timedelta(days=119)).date().isoformat()
        pg.locator("#detail-summary", has_text=f"since {first}").wait_for(timeout=10000)  # no eval: the CSP
        text = pg.locator("#detail-summary").inner_text()
        assert "120 nightly points" in text and f"since {first}" in text  # the first of all 120, not of the 90
        assert len([u for u in loaded if u[0] == "series"]) == 1
    finally:
        context.close()
        if server:
            server.shutdown()
            server.server_close()
    assert errors == []
