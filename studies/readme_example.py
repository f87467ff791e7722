"""(maker) The README's example: a made-up history, its `bench report` table and a dashboard screenshot.

    .venv/bin/python studies/readme_example.py [--out .local/readme-example] [--readme README.md]
                                               [--png docs/dashboard.png]

Writes 45 nights of four homelab targets (bench.records.synthetic: 2 % noise, an
occasional deep dip, no failures) with two level changes a reader should see:
torch cnn/train on rtx-5070-ti 12 % slower for the last 6 nights (Regressed) and
jax mlp/predict on rtx-5070-ti 10 % faster for the last 5 (Faster). Then, each
through the `bench` command as a user runs it:

  bench report --data OUT/data --format markdown   printed, and with --readme put
                                                   between the README's table markers
  bench site --data OUT/data --out OUT/site        the dashboard, screenshotted in
                                                   Playwright's Chromium to --png
                                                   ($BENCH_CHROMIUM: another Chromium)

The history is deterministic (seed 7, nights ending 2026-12-01), so the table
and the picture change only when the report or the dashboard does.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from bench.records import synthetic

NIGHTS = 45
TARGETS = (("jax", "rtx-5070-ti"), ("torch", "rtx-5070-ti"), ("mlx", "apple-m4"), ("jax", "local-cpu"))
STEPS = {("torch", "rtx-5070-ti", "cnn", "train"): [synthetic.Step(NIGHTS - 6, 0.88)],
         ("jax", "rtx-5070-ti", "mlp", "predict"): [synthetic.Step(NIGHTS - 5, 1.10)]}
END = datetime(2026, 12, 1, 2, 17, tzinfo=timezone.utc)


def bench(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "bench", *args], capture_output=True, text=True)
    if done.returncode not in (0, 1):
        sys.exit(f"readme_example: bench {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def screenshot(index: Path, png: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=os.environ.get("BENCH_CHROMIUM") or None)
        page = browser.new_page(viewport={"width": 1280, "height": 860}, device_scale_factor=1)
        page.goto(index.resolve().as_uri())
        page.wait_for_selector("[data-ready=all]", timeout=30_000)
        png.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(png))
        browser.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=".local/readme-example", help="folder for the history and the site")
    ap.add_argument("--readme", default=None, help="also put the table into this README, between its markers")
    ap.add_argument("--png", default=None, help="also screenshot the dashboard to this file")
    a = ap.parse_args(argv)
    out = Path(a.out)
    data = out / "data"
    if not data.exists():
        n = synthetic.write_history(data, NIGHTS, targets=TARGETS, seed=7, end=END, steps=STEPS, fail_rate=0.0)
        print(f"readme_example: {n} records in {data}", file=sys.stderr)
    print(bench("report", "--data", str(data), "--format", "markdown"), end="")
    if a.readme:
        bench("report", "--data", str(data), "--readme", a.readme)
    if a.png:
        bench("site", "--data", str(data), "--out", str(out / "site"))
        screenshot(out / "site" / "index.html", Path(a.png))
        print(f"readme_example: dashboard -> {a.png}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
