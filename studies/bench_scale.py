"""Ten years, a hundred series: today's report, site, show and publish beside the first landing's (issue 55).

    .venv/bin/python studies/bench_scale.py [--work DIR] [--sets 1y-100,5y-24,10y-100]
                                            [--repeats 2] [--skip site,publish,browser]

Builds the synthetic data sets (bench.records.synthetic; no environment blocks
nor host readings, so real records are heavier) once under --work, checks out
the first landing (commit 3a6a346) with `git worktree add` into a scratch
folder under /tmp, and times in this one run, on the same data, each command
as a fresh process: the first landing's, today's reading every record (no
summary), and today's reading the summary. Results are ratios to the first
landing's time taken beside it: the machine is shared and its speed moves.
Printed first: the load average, as a measure of how busy it was.

Also: the summary's size and build time; `bench show` (its last 90 nights)
with its checks remembered, the first after a full clone, after a night is
added, and the first after a sparse checkout, and `bench show --all`
remembered and the first after a full clone; the site's first
download (data/index.json) and its readiness in Chromium through
Playwright; one nightly publish (a fresh record appended, summary included)
to a local bare repository holding the set, and a clone of it, full and as
scripts/checkout-data.sh makes it (partial, sparse: the summary and the
newest month).
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.records import synthetic  # noqa: E402
from bench.records.record import RunRecord, write  # noqa: E402

FIRST_LANDING = "3a6a346"
# 25 targets x 4 series = 100 series; the first 6 are synthetic.TARGETS (24 series).
TARGETS_100 = synthetic.TARGETS + tuple(("jax", f"box-{i:02d}") for i in range(19))
SETS = {"1y-24": (365, synthetic.TARGETS), "1y-100": (365, TARGETS_100),
        "5y-24": (1826, synthetic.TARGETS), "10y-100": (3650, TARGETS_100)}


def build(work: Path, name: str) -> Path:
    days, targets = SETS[name]
    folder = work / name
    if not (folder / ".complete").exists():
        shutil.rmtree(folder, ignore_errors=True)
        t = time.perf_counter()
        n = synthetic.write_history(folder, days, targets=targets)
        (folder / ".complete").write_text(f"{n}\n")
        print(f"# built {name}: {n} files in {time.perf_counter() - t:.0f} s", flush=True)
    return folder


def first_landing(scratch: Path) -> Path:
    where = scratch / "first-landing"
    if not (where / "bench").is_dir():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--force", str(where), FIRST_LANDING],
                       check=True, capture_output=True)
    return where


def run(cmd: list[str], code: Path, cwd: Path | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of `cmd` with `code` first on PYTHONPATH; CPU
    is the child's user + system time, which a busy machine moves far less than wall."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    c0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd or code, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-500:]}")
    return wall, cpu


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def side_by_side(runs: dict[str, tuple[list[str], Path]], repeats: int) -> dict[str, tuple[float, float]]:
    """{name: (median wall, median CPU)}, the commands run in turn, `repeats` rounds,
    so that each sees the machine as the others did."""
    got: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, (cmd, code) in runs.items():
            got[name].append(run(cmd, code))
    return {name: (statistics.median(w for w, _ in xs), statistics.median(c for _, c in xs)) for name, xs in got.items()}


def without_summary(data: Path, scratch: Path) -> Path:
    """The set as a folder whose runs/ is the set's (a link) and holds no summary."""
    plain = scratch / f"{data.name}-plain"
    if not plain.exists():
        plain.mkdir()
        (plain / "runs").symlink_to(data / "runs")
    return plain


def sparse_view(data: Path, scratch: Path, months: int = 2) -> Path:
    """What scripts/checkout-data.sh leaves of the set: summary/ and the newest
    `months` months of runs/ (hard links), marked as a sparse checkout."""
    view = scratch / f"{data.name}-sparse"
    if not (view / ".git" / "info" / "sparse-checkout").is_file():
        shutil.rmtree(view, ignore_errors=True)
        shutil.copytree(data / "summary", view / "summary", copy_function=os.link)
        for month in sorted((data / "runs").glob("*/*"))[-months:]:
            shutil.copytree(month, view / month.relative_to(data), copy_function=os.link)
        (view / ".git" / "info").mkdir(parents=True)
        (view / ".git" / "info" / "sparse-checkout").write_text("/summary/\n")
    return view


def bench(*args: str) -> list[str]:
    return [sys.executable, "-m", "bench", *args]


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def row(name: str, what: str, t: dict[str, tuple[float, float]], goal: str = "") -> None:
    """One table row: wall and CPU seconds of each side, and today's (summary) over the first landing's."""
    cell = lambda k: f"{t[k][0]:.2f} s ({t[k][1]:.2f} s CPU)" if k in t else "—"  # noqa: E731
    ratio = (f"{t['summary'][0] / t['first'][0]:.2f}x wall, {t['summary'][1] / t['first'][1]:.2f}x CPU"
             if "first" in t else "—")
    print(f"| {name} | {what} | {cell('first')} | {cell('records')} | {cell('summary')} | {ratio} | {goal} |",
          flush=True)


def measure_set(name: str, data: Path, first: Path, scratch: Path, repeats: int, skip: set[str]) -> None:
    plain = without_summary(data, scratch)
    t = time.perf_counter()
    subprocess.run(bench("summary", "--data", str(data)), cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                   check=True, capture_output=True)
    built = time.perf_counter() - t
    size = du(data / "summary")
    print(f"| {name} | summary: built (or checked) in {built:.1f} s, {size / 1e6:.1f} MB | | | | | |", flush=True)
    for fmt in () if "report" in skip else ("markdown", "json"):
        args = ("report", "--data", None, "--format", fmt)
        sides = {"first": (bench(*_at(args, plain)), first), "summary": (bench(*_at(args, data)), ROOT)}
        if "records" not in skip:
            sides["records"] = (bench(*_at(args, plain)), ROOT)
        row(name, f"report --format {fmt}", side_by_side(sides, repeats), "≤ 0.5x (5y), ≤ 0.2x (10y)")
    if "show" in skip:
        return _site_and_publish(name, data, first, scratch, skip, repeats)
    imports = side_by_side({"first": ([sys.executable, "-c", "import bench.trends"], first),
                            "summary": ([sys.executable, "-c", "import bench.analyse.trends"], ROOT)}, repeats)
    row(name, "(importing the status rule alone: today's brings scipy.special)", imports)
    show = ("show", "jax/rtx-5070-ti/cnn/train", "--data")
    sides = {"summary": (bench(*show, str(data)), ROOT)}
    if "records" not in skip:
        sides["records"] = (bench(*show, str(plain)), ROOT)
    # The first show after a clone checks the summary in full; it leaves what it
    # checked for the next reader (bench.records.checked), as report and site do.
    cold = ["sh", "-c", f'XDG_CACHE_HOME="$(mktemp -d -p {shlex.quote(str(scratch))})" exec "$0" "$@"',
            *bench(*show, str(data))]
    sides["summary, nothing remembered"] = (cold, ROOT)
    # What a nightly pull does to the walk: a night's folder changes, so its
    # month is listed again (the summary's newest month, which changes too, is read whole anyway).
    night = max((data / "runs").glob("*/*/*"))
    sides["summary, a night added"] = (["sh", "-c", f'touch {shlex.quote(str(night))} && exec "$0" "$@"',
                                        *bench(*show, str(data))], ROOT)
    sparse = sparse_view(data, scratch)
    sides["summary, sparse checkout"] = (["sh", "-c", f'XDG_CACHE_HOME="$(mktemp -d -p {shlex.quote(str(scratch))})" exec "$0" "$@"',
                                          *bench(*show, str(sparse))], ROOT)
    # Every night (--all): the target's lines of every month, as show printed before it printed the last 90.
    sides["summary, --all"] = (bench(*show, str(data), "--all"), ROOT)
    sides["summary, --all, nothing remembered"] = (cold + ["--all"], ROOT)
    run(bench(*show, str(data)), ROOT)  # untimed: what the first round's "remembered" show would check
    run(bench(*show, str(data), "--all"), ROOT)
    times = side_by_side(sides, repeats)
    row(name, "show jax/rtx-5070-ti/cnn/train (the last 90 nights)", times, "≤ 0.5 s (10y)")
    for side, what in (("summary, nothing remembered", "the first after a full clone (nothing remembered)"),
                       ("summary, a night added", "after a night is added (its month walked again)"),
                       ("summary, sparse checkout", "the first after scripts/checkout-data.sh (nothing remembered)"),
                       ("summary, --all", "--all (every night), remembered"),
                       ("summary, --all, nothing remembered", "--all, the first after a full clone")):
        print(f"| {name} | show, {what} | | | {times[side][0]:.2f} s ({times[side][1]:.2f} s CPU) | | |", flush=True)
    _site_and_publish(name, data, first, scratch, skip, repeats)


def _site_and_publish(name: str, data: Path, first: Path, scratch: Path, skip: set[str], repeats: int) -> None:
    plain = without_summary(data, scratch)
    if "site" not in skip:
        site = scratch / f"{name}-site"
        row(name, "site --no-plots", side_by_side({
            "first": (bench("site", "--data", str(plain), "--out", str(scratch / f"{name}-site-first"), "--no-plots"),
                      first),
            "summary": (bench("site", "--data", str(data), "--out", str(site), "--no-plots"), ROOT)}, repeats),
            "≤ 0.2x (10y)")
        old = du(scratch / f"{name}-site-first" / "data")
        first_download = (site / "data" / "index.json").stat().st_size
        print(f"| {name} | dashboard data: first landing {old / 1e6:.1f} MB (index.json + index.js); today's "
              f"first download (data/index.json) {first_download / 1e6:.2f} MB, all of data/ "
              f"{du(site / 'data') / 1e6:.1f} MB | | | | | ≤ 1 MB |", flush=True)
        if "browser" not in skip:
            ready, fetched = browser_ready(site)
            print(f"| {name} | dashboard ready in Chromium (table drawn), median of 3 loads: {ready:.0f} ms; "
                  f"fetched {fetched / 1e6:.2f} MB (page, scripts, data) | | | | | < 1000 ms, ≤ 1 MB |", flush=True)
    if "publish" not in skip:
        publish_and_clone(name, data, scratch)


def _at(args, data: Path) -> list[str]:
    return [str(data) if a is None else a for a in args]


ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Every byte the page fetched: the document and each resource (same origin, so sizes are visible).
BYTES_JS = """() => performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
  .reduce((n, e) => n + e.encodedBodySize, 0)"""


def browser_ready(site: Path, loads: int = 3) -> tuple[float, int]:
    """(median ms until the table is drawn, the most bytes a load fetched) of
    `loads` fresh page loads over http, in Chromium through Playwright."""
    import threading

    from playwright.sync_api import sync_playwright

    from bench.commands.serve import make_server
    from tests.helpers import chromium  # $BENCH_CHROMIUM, Debian's, or Playwright's own

    server = make_server(site, "127.0.0.1", 0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    got = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium()[0] or "/usr/bin/chromium", args=ARGS)
            for _ in range(loads):
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                page = context.new_page()
                page.goto(url)
                page.wait_for_selector("html[data-ready=all]", timeout=30000)
                got.append((page.evaluate("window.__benchTableMs"), page.evaluate(BYTES_JS)))
                context.close()
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    return statistics.median(ms for ms, _ in got), max(n for _, n in got)


def publish_and_clone(name: str, data: Path, scratch: Path) -> None:
    """A bare repository holding the set (summary included) on gh-pages, kept
    beside the set (built once: at ten years it takes minutes); one nightly
    publish of one new record; a full and a partial sparse clone."""
    bare = data.parent / f"{name}.git"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GIT_AUTHOR_NAME": "s", "GIT_AUTHOR_EMAIL": "s@x",
           "GIT_COMMITTER_NAME": "s", "GIT_COMMITTER_EMAIL": "s@x"}
    if not bare.exists():
        work = scratch / f"{name}-repo"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        git = lambda *a: subprocess.run(["git", "-C", str(work), *a], check=True, capture_output=True, env=env)  # noqa: E731
        git("init", "-q", "-b", "gh-pages")
        shutil.copytree(data / "runs", work / "runs")
        shutil.copytree(data / "summary", work / "summary")
        git("add", "-A")
        git("commit", "-qm", "history")
        subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True, env=env)
        subprocess.run(["git", "-C", str(bare), "config", "uploadpack.allowFilter", "true"], check=True)
        # Packed, as a hosted repository is: 91,000 loose objects would make
        # the first push start a gc that the publishes measured would wait on.
        subprocess.run(["git", "-C", str(bare), "repack", "-adq"], check=True)
        shutil.rmtree(work)
    (newest,) = synthetic.history(1, targets=SETS[name][1][:1], seed=7,
                                  end=synthetic.datetime(2026, 12, 2, 2, tzinfo=synthetic.timezone.utc))
    times = []
    for i in range(3):
        rec = RunRecord.from_dict({**newest.data, "run": {**newest.data["run"], "id": f"9{time.time_ns() % 10**9}"}})
        with tempfile.TemporaryDirectory() as tmp:
            times.append(run(bench("publish", "--repo", str(bare), str(write(rec, tmp))), ROOT))
    wall, cpu = statistics.median(w for w, _ in times), statistics.median(c for _, c in times)
    print(f"| {name} | one nightly publish (1 record + summary) to a local bare repo, median of 3: "
          f"{wall:.2f} s ({cpu:.2f} s CPU, git's included) | | | | | ≤ 2x from 1y to 10y |", flush=True)
    for how, cmd in (("full clone", ["git", "clone", "-q", "--single-branch", "-b", "gh-pages", f"file://{bare}"]),
                     ("checkout-data.sh", ["bash", str(ROOT / "scripts" / "checkout-data.sh")])):
        dest = scratch / f"{name}-clone"
        shutil.rmtree(dest, ignore_errors=True)
        t = time.perf_counter()
        subprocess.run(cmd + [str(dest)], check=True, capture_output=True,
                       env={**env, "DATA_REPO": f"file://{bare}", "DATA_BRANCH": "gh-pages"})
        took = time.perf_counter() - t
        files = sum(1 for _ in (dest / "runs").rglob("*.json")) if (dest / "runs").exists() else 0
        print(f"| {name} | {how}: {took:.2f} s, {files} record files, {du(dest) / 1e6:.0f} MB on disk "
              f"| | | | | |", flush=True)
        shutil.rmtree(dest, ignore_errors=True)


def formats(data: Path) -> None:
    """The summary's format, by measurement: reading every row of the set's
    summary back into Python as JSON lines (today's, one parse per month file)
    and as SQLite (the same lines, one table, rows as tuples), and what one
    nightly publish adds to each as a git blob."""
    import json
    import sqlite3
    import zlib

    from bench.records import summary

    months = sorted((data / "summary").glob("*.jsonl"))
    c0 = time.process_time()
    lines = [x for m in months for x in summary._month_lines(m)[0]]
    json_cpu = time.process_time() - c0
    db = data.parent / f"{data.name}-summary.sqlite"
    db.unlink(missing_ok=True)
    con = sqlite3.connect(db)
    con.execute("create table rows (path, started_at, night, attempt, run_id, backend, device, keras_version, url, "
                "state, model, mode, status, value, unit, better, q1, q2, q3)")
    con.executemany("insert into rows values (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", [
        (x["path"], x["started_at"], x["night"], x["attempt"], x["run_id"], x["backend"], x["device"],
         x.get("keras_version"), x.get("url"), json.dumps(x.get("states")), *r[:4], r[4], r[5],
         *(r[7] or (None, None, None))) for x in lines for r in x.get("rows", ())])
    con.commit()
    con.close()
    c0 = time.process_time()
    con = sqlite3.connect(db)
    n = len(con.execute("select * from rows").fetchall())
    sql_cpu = time.process_time() - c0
    con.close()
    newest = months[-1].read_bytes()
    line = newest.splitlines()[-1] + b"\n"
    print(f"| format | {len(lines)} lines, {n} rows | JSON lines: read {json_cpu:.2f} s CPU, "
          f"{du(data / 'summary') / 1e6:.0f} MB; a publish rewrites one month file "
          f"({len(newest) / 1e3:.0f} kB, {len(zlib.compress(newest)) / 1e3:.0f} kB zlib as a loose blob; "
          f"a text delta of {len(line)} B in a pack) | SQLite: read {sql_cpu:.2f} s CPU (rows only, no "
          f"JSON states), {db.stat().st_size / 1e6:.0f} MB; a publish rewrites the binary file "
          f"({len(zlib.compress(db.read_bytes())) / 1e6:.0f} MB zlib as a blob, page-level changes) | | | |",
          flush=True)
    db.unlink()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", default="/tmp/bench-scale", help="where the data sets are kept (reused)")
    ap.add_argument("--sets", default="1y-100,5y-24,10y-100", help=f"comma-separated, of {', '.join(SETS)}")
    ap.add_argument("--repeats", type=int, default=2, help="runs per timing (median)")
    ap.add_argument("--skip", default="", help="leave out: records (today reading every record), report, show, site, publish, browser")
    ap.add_argument("--build-only", action="store_true", help="build the data sets and stop")
    ap.add_argument("--formats", action="store_true", help="only compare the summary's formats on each set")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    names = [n for n in args.sets.split(",") if n]
    bad = [n for n in names if n not in SETS]
    if bad:
        raise SystemExit(f"--sets {','.join(bad)}: unknown; expected some of {', '.join(SETS)}")
    folders = {n: build(work, n) for n in names}
    if args.build_only:
        return 0
    if args.formats:
        for n in names:
            subprocess.run(bench("summary", "--data", str(folders[n])), cwd=ROOT, check=True, capture_output=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
            formats(folders[n])
        return 0
    print(f"# load average before: {os.getloadavg()}; {os.cpu_count()} CPUs", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-scale-", dir="/tmp") as tmp:
        scratch = Path(tmp)
        # What the readers remember of the sets' summaries (bench.records.checked) stays in the scratch folder.
        os.environ["XDG_CACHE_HOME"] = str(scratch / "cache")
        first = first_landing(scratch)
        # Each command runs from compiled bytecode, as an installed package
        # does: without it every run compiles the modules changed since the
        # last bytecode was written (0.05-0.2 s of a show; PYTHONDONTWRITEBYTECODE
        # is set in some shells, and a fresh worktree has none).
        for code in (ROOT, first):
            compileall.compile_dir(str(code / "bench"), quiet=1)
        try:
            print("| data | command | first landing | today, reading the records | today, reading the summary "
                  "| summary / first landing | goal |")
            print("| --- | --- | --- | --- | --- | --- | --- |")
            for n in names:
                measure_set(n, folders[n], first, scratch, args.repeats, set(args.skip.split(",")))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(first)], capture_output=True)
    print(f"# load average after: {os.getloadavg()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
