"""Append run records to the data branch, exactly once, retrying push races.

  python -m bench publish --repo PATH_OR_URL [--branch gh-pages]
                          [--provenance FILE | --expect-run-id ID [--expect-repository OWNER/NAME]
                           [--expect-event EVENT] [--run-created-at TIME]] RECORD...

Pipeline: load (each file through the publish gate, bench/records/guard.py:
size and shape caps, strict JSON, the record contract, bounded numbers,
plain labels, only the models and modes benchmarks.yaml (--config) names,
dates, provenance and the artifact's name; then the caps per artifact and
per run) -> compute (where each admitted record goes on the branch) ->
write (one commit adding every new record, and appending them to the
summary when the branch has one, pushed with retries on races).

Quarantine: one publish takes what is good and refuses what is not. Each
refused file is one line on stderr, `bench publish: refused FILE: REASON`,
and a row in $GITHUB_STEP_SUMMARY when that is set. Refused: a file the gate
refuses, two files for one path with different content, a path on the branch
that holds other content (records are never edited) or a file where a folder
must be (or the reverse). The branch only ever gains files.

Provenance (for the publish workflow, engineer WF): either
  --provenance FILE     a JSON map of artifact folder -> the run it came from
                        (format in bench/records/guard.py): run_id (required),
                        repository, event, created_at, run_started_at,
                        run_attempt (the GitHub API's run fields); a record
                        below no listed folder is refused; FILE may lie in
                        the download folder (it is never taken as a record); or
  --expect-run-id ID    every record must carry run.id ID (one run's
                        artifacts per call), with optionally
                        --expect-repository OWNER/NAME, --expect-event EVENT
                        (schedule, workflow_dispatch) and --run-created-at TIME
                        (RFC 3339, the run's created_at).
A record may be dated at most 26 h after its run's created_at (or
run_started_at, when a re-run started later; after now without either), and
not before created_at; its run.night is the night of its run's created_at
or the one before; run.id must equal the run's id; run.repository, run.event
and run.attempt must agree with the run when it names them; with
--provenance, its artifact folder must be named for its attempt, device and
backend (`record-<run id>-<attempt>-<device>-<backend>`).

Prints one line per record (added / already there) and the commit.
Exit codes: 0 every record is on the branch (also when nothing was new);
3 some were refused (named), the rest were published; 1 could not publish
(git failed or the push was still rejected after --attempts: the branch did
not move); 2 usage errors (no such file, a bad flag or provenance file).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from bench import config
from bench.commands.arguments import positive_int
from bench.errors import EXIT_OK, EXIT_SOME_REFUSED, UsageError
from bench.records import summary as summary_store
from bench.records.guard import Gate, Provenance, Refusal, admit_all, load_provenance, one_line
from bench.records.record import RecordError, parse_time
from bench.records.store import DEFAULT_BRANCH, PublishResult, Retry, publish, record_files


def add_arguments(parser):
    parser.add_argument("--repo", required=True, metavar="PATH_OR_URL",
                        help="the git repository holding the data branch (a local path or a URL)")
    parser.add_argument("--branch", default=DEFAULT_BRANCH, help=f"the data branch (default {DEFAULT_BRANCH})")
    parser.add_argument("--attempts", type=positive_int, default=Retry.attempts,
                        help=f"pushes to try before giving up (default {Retry.attempts})")
    parser.add_argument("--provenance", metavar="FILE",
                        help="JSON map of artifact folder -> the run it came from (bench/records/guard.py)")
    parser.add_argument("--expect-run-id", metavar="ID", help="every record must carry this run.id")
    parser.add_argument("--expect-repository", metavar="OWNER/NAME",
                        help="with --expect-run-id: the run's repository (checked when a record names one)")
    parser.add_argument("--expect-event", metavar="EVENT", help="with --expect-run-id: the run's event")
    parser.add_argument("--run-created-at", metavar="TIME",
                        help="with --expect-run-id: the run's created_at (RFC 3339); later dates are refused")
    parser.add_argument("records", nargs="+", metavar="RECORD",
                        help="run record files; a folder means every *.json below it")


def main(args) -> int:
    files = record_files(args.records)                      # usage errors: exit 2 via cli
    gate = _gate(args)
    if args.provenance:  # it may sit in the download folder it describes: never a record
        files = [f for f in files if f.resolve() != Path(args.provenance).resolve()]
    admitted, refused = admit_all(files, gate)             # load: each file on its own, then the caps
    result = None
    if admitted:                                            # compute + write: one commit or none
        result = publish(admitted, args.repo, args.branch,
                         retry=Retry(attempts=args.attempts), log=sys.stderr, derive=summary_files)
        refused += result.refused
    report(result, refused, len(files))
    return EXIT_SOME_REFUSED if refused else EXIT_OK


def summary_files(read, new) -> dict[str, str]:
    """The summary's newest month(s) and coverage with `new` records appended
    (bench/records/summary.py); nothing when the branch has no summary yet
    (`bench summary` builds it; the readers use the records meanwhile).
    Reads only those files from the branch: a publish's cost does not grow
    with the history."""
    from bench.analyse.summarised import summary_line

    folder = summary_store.FOLDER
    text = read(f"{folder}/{summary_store.COVERAGE}")
    if text is None:
        return {}
    try:
        cov = summary_store.Coverage.from_text(text, f"{folder}/{summary_store.COVERAGE}")
    except ValueError as e:
        print(f"bench publish: {e}; the summary is left as it is (`bench summary` rebuilds it)", file=sys.stderr)
        return {}
    by_month: dict[str, list] = {}
    for rec in new:
        month = summary_store.month_of(rec.relpath())
        if month is not None:
            by_month.setdefault(month, []).append(summary_line(rec, rec.relpath()))
    months, dates, out = dict(cov.months), dict(cov.dates), {}
    for month, lines in sorted(by_month.items()):
        try:
            out[f"{folder}/{month}.jsonl"], months[month], found = summary_store.merge_month(
                read(f"{folder}/{month}.jsonl"), lines)
            summary_store.set_dates(dates, month, found)
        except (ValueError, KeyError, TypeError) as e:
            print(f"bench publish: {folder}/{month}.jsonl is not a summary month ({e}); the summary is left "
                  "as it is (`bench summary` rebuilds it)", file=sys.stderr)
            return {}
    out[f"{folder}/{summary_store.COVERAGE}"] = summary_store.Coverage(months, dates).to_json()
    return out


def _gate(args) -> Gate:
    cfg = config.load(args.config)  # the models and modes a record may name
    expect = (args.expect_repository, args.expect_event, args.run_created_at)
    if args.provenance and (args.expect_run_id or any(expect)):
        raise UsageError("--provenance and --expect-*/--run-created-at: expected one or the other")
    if any(expect) and not args.expect_run_id:
        raise UsageError("--expect-repository, --expect-event and --run-created-at need --expect-run-id ID")
    try:
        if args.provenance:
            return Gate.named_by(cfg, folders=load_provenance(args.provenance))
        if args.expect_run_id:
            created = parse_time(args.run_created_at, "--run-created-at") if args.run_created_at else None
            return Gate.named_by(cfg, every=Provenance(args.expect_run_id, args.expect_repository,
                                                       args.expect_event, created))
    except (RecordError, ValueError) as e:
        raise UsageError(str(e)) from None
    return Gate.named_by(cfg)


def report(result: PublishResult | None, refused: list[Refusal], files: int) -> None:
    """Stdout: the placed records and the commit. Stderr (and the job
    summary): one line per refused file."""
    for r in refused:
        print(f"bench publish: refused {r.line()}", file=sys.stderr)
    if result is not None:
        print(summary(result))
    if refused:
        print(f"bench publish: {len(refused)} of {files} record file(s) refused (named above); "
              f"{'the rest were published' if result is not None else 'nothing was published'}", file=sys.stderr)
        _step_summary(refused, files)


def _step_summary(refused: list[Refusal], files: int) -> None:
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    from bench.present.escape import markdown as escape
    lines = [f"### bench publish: {len(refused)} of {files} record file(s) refused", "",
             "| file | reason |", "|---|---|"]
    lines += [f"| {escape(r.source)} | {escape(r.reason)} |" for r in refused]
    try:
        with open(path, "a", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n\n")
    except OSError as e:  # the summary is a courtesy; stderr already has every line
        print(f"bench publish: could not append to GITHUB_STEP_SUMMARY {path}: {e.strerror}", file=sys.stderr)


def summary(result: PublishResult) -> str:
    # one_line: a file name may hold a newline, and a line of ours starting '::' would be a workflow command
    lines = [f"{p.status:<13} {p.relpath}  ({one_line(p.source)})" for p in result.placed]
    if result.commit:
        lines.append(f"commit {result.commit} on {result.branch} of {result.repo}: "
                     f"{len(result.added)} added, {len(result.placed) - len(result.added)} already there "
                     f"(push attempt {result.attempts})")
    elif result.placed:
        tip = result.tip[:12] if result.tip else "?"
        lines.append(f"nothing new: all {len(result.placed)} record(s) already on {result.branch} "
                     f"of {result.repo} (tip {tip}); no commit")
    else:
        lines.append(f"nothing published to {result.branch} of {result.repo}: every record was refused")
    return "\n".join(lines)
