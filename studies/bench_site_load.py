"""How fast the dashboard loads with five years of history, in Debian's Chromium.

Writes a made-up history (6 targets x 4 series, one run per target per night,
bench.records.synthetic), builds the site with `python -m bench site`, serves it over
http on 127.0.0.1 and loads it in a fresh browser context (empty cache) a few
times. Prints, per load and as the median:
  table ms   navigation start -> table rendered (the page sets data-ready=table)
  all ms     navigation start -> small multiples drawn too (data-ready=all)
  bytes      what the page downloaded (html, css, js, data/index.json)
Goal (issue 5): table under 1 s, under 2 MB.

  .venv/bin/python studies/bench_site_load.py [--days 1825] [--loads 5] [--cpu-slowdown 4] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import cli

from bench.records import synthetic  # noqa: E402
from bench.commands.serve import make_server  # noqa: E402

from tests.helpers import chromium  # noqa: E402  ($BENCH_CHROMIUM, Debian's, or Playwright's own)

CHROMIUM = chromium()[0] or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Every byte the page fetched: the document and each resource (same origin, so sizes are visible).
BYTES_JS = """() => performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
  .reduce((n, e) => n + e.encodedBodySize, 0)"""


def build(root: Path, days: int, plots: bool) -> Path:
    data, site = root / "data", root / "site"
    if not (data / "runs").is_dir():
        t = time.perf_counter()
        n = synthetic.write_history(data, days)
        print(f"history: {n} record files, {days} nights ({time.perf_counter() - t:.1f} s)")
    t = time.perf_counter()
    argv = ["site", "--data", str(data), "--out", str(site)] + ([] if plots else ["--no-plots"])
    if cli.main(argv) != 0:
        raise SystemExit("bench site failed")
    index = site / "data" / "index.json"
    print(f"bench site: {time.perf_counter() - t:.1f} s; data/index.json {index.stat().st_size / 1e6:.2f} MB")
    return site


def measure(site: Path, loads: int, slowdown: float = 1) -> list[tuple[float, float, int]]:
    from playwright.sync_api import sync_playwright

    server = make_server(site, "127.0.0.1", 0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    out = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for _ in range(loads):
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                page = context.new_page()
                if slowdown > 1:  # a slower laptop or phone: Chromium's own CPU throttling
                    context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": slowdown})
                errors = []
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.goto(url)
                page.wait_for_selector("html[data-ready=all]", timeout=30000)
                if errors:
                    raise SystemExit(f"page errors: {errors}")
                table_ms, all_ms = page.evaluate("[window.__benchTableMs, window.__benchAllMs]")
                out.append((table_ms, all_ms, page.evaluate(BYTES_JS)))
                context.close()
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=365 * 5, help="nights of history (default 1825)")
    ap.add_argument("--loads", type=int, default=5, help="page loads to measure (default 5)")
    ap.add_argument("--plots", action="store_true", help="also write the PNG plots (not loaded by the page)")
    ap.add_argument("--cpu-slowdown", type=float, default=1,
                    help="throttle the page's CPU by this factor (e.g. 4), as on a slower machine")
    ap.add_argument("--keep", metavar="DIR", help="build in DIR and keep it (reuses DIR/data if there)")
    args = ap.parse_args()
    if args.keep:
        root = Path(args.keep)
        root.mkdir(parents=True, exist_ok=True)
        return report(measure(build(root, args.days, args.plots), args.loads, args.cpu_slowdown))
    with tempfile.TemporaryDirectory(prefix="bench-site-load-") as tmp:
        return report(measure(build(Path(tmp), args.days, args.plots), args.loads, args.cpu_slowdown))


def report(loads: list[tuple[float, float, int]]) -> int:
    for i, (table, everything, size) in enumerate(loads, 1):
        print(f"load {i}: table {table:.0f} ms, all {everything:.0f} ms, {size / 1e6:.2f} MB")
    table = statistics.median(x[0] for x in loads)
    everything = statistics.median(x[1] for x in loads)
    size = max(x[2] for x in loads)
    verdict = "OK" if table < 1000 and size < 2e6 else "OVER GOAL"
    print(f"median: table {table:.0f} ms, all {everything:.0f} ms; downloaded {size / 1e6:.2f} MB "
          f"(goal: < 1000 ms, < 2 MB) {verdict}")
    return 0 if verdict == "OK" else 1


if __name__ == "__main__":
    sys.exit(main())
