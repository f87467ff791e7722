#!/usr/bin/env python3
"""A stand-in for the `gh` CLI, serving a made-up GitHub from a folder.

Only the calls the workflow scripts make are understood; anything else fails
loudly so a script that starts calling something new is noticed. Every call is
appended to FAKE_GH_ROOT/calls.jsonl (argv and stdin) for the tests to check.

FAKE_GH_ROOT layout:
  runs/<run id>/<artifact name>/...  artifacts of a workflow run
  runs/<run id>.json                 the run's fields, over the defaults of a
                                     scheduled nightly.yml run of this repository
                                     on main (path, event, head_repository, head_branch);
                                     a created_at given here is honoured by a sweep's
                                     `created>=` filter (a derived one counts as recent)
  workflow-runs.jsonl                `gh workflow run` calls, one JSON a line
  FAKE_GH_FAIL (environment)         a call whose argv contains this text fails (HTTP 502)
  pulls/<n>.json                     GET repos/R/pulls/<n>
  pulls/<n>.files                    the PR's changed files, one a line
  comments/<n>.json                  the PR's issue comments (a JSON list; kept up to date)
  issues/<n>.json                    issues (bench alert): title, body, labels, state, user
  permissions.json                   {login: permission} for GET repos/R/collaborators/<login>/permission
                                     (a login not listed: HTTP 404)
  labels.json                        the repository's labels (a JSON list of names; none at first)
  FAKE_GH_NO_LABEL_WRITE (env)       creating a label fails with HTTP 403, as for a token
                                     without the right; a new issue then silently loses
                                     the labels that do not exist, as GitHub does
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import sys
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(os.environ["FAKE_GH_ROOT"])
COMMENT_AUTHOR = "github-actions[bot]"


def main(argv: list[str]) -> int:
    stdin = sys.stdin.read() if "--input" in argv else ""
    with open(ROOT / "calls.jsonl", "a") as f:
        f.write(json.dumps({"argv": argv, "stdin": stdin}) + "\n")
    broken = os.environ.get("FAKE_GH_FAIL")
    if broken and any(broken in a for a in argv):
        return fail("HTTP 502: Bad Gateway (https://api.github.com/)")
    if argv[:2] == ["workflow", "run"]:
        return workflow_run(argv[2:])
    if argv[:2] == ["run", "list"]:
        return run_list(argv[2:])
    if argv[:2] == ["run", "download"]:
        return run_download(argv[2], _opts(argv[3:]))
    if argv[:1] == ["api"]:
        return api(argv[1:], stdin)
    return fail(f"fake gh: unsupported call {argv}")


def _opts(args: list[str]) -> dict[str, str]:
    opts, i = {}, 0
    while i < len(args):
        if args[i].startswith("--") and i + 1 < len(args) and not args[i + 1].startswith("--"):
            opts[args[i]] = args[i + 1]
            i += 2
        else:
            opts[args[i]] = ""
            i += 1
    return opts


def run_list(args: list[str]) -> int:
    opts = _opts(args)
    if opts.get("--json") != "databaseId" or opts.get("--jq") != ".[].databaseId" or "--repo" not in opts:
        return fail(f"fake gh: unexpected run list options {args}")
    runs = _run_ids()
    print("\n".join(runs))
    return 0


def run_download(run: str, opts: dict[str, str]) -> int:
    src = ROOT / "runs" / run
    names = sorted(p.name for p in src.iterdir()) if src.is_dir() else []
    chosen = [n for n in names if fnmatch.fnmatchcase(n, opts.get("--pattern", "*"))]
    if not chosen:
        return fail("no artifact matches any of the names or patterns provided")
    for name in chosen:
        shutil.copytree(src / name, Path(opts["--dir"]) / name, dirs_exist_ok=True)
    return 0


def _run_ids() -> list[str]:
    folder = ROOT / "runs"
    return sorted((p.name for p in folder.iterdir() if p.is_dir()), key=int) if folder.is_dir() else []


def _run_fields(run: str) -> dict:
    """The run as the API lists it. created_at: a minute before the oldest
    record among its artifacts (a run is created before its jobs start)."""
    starts = []
    for path in (ROOT / "runs" / run).rglob("*.json"):
        try:
            starts.append(json.loads(path.read_text())["run"]["started_at"])
        except (ValueError, KeyError, TypeError):
            pass
    created = "2026-01-01T00:00:00Z"
    if starts:
        first = datetime.fromisoformat(min(starts).replace("Z", "+00:00")) - timedelta(minutes=1)
        created = first.strftime("%Y-%m-%dT%H:%M:%SZ")
    fields = {"id": int(run), "path": ".github/workflows/nightly.yml", "event": "schedule",
              "head_repository": {"full_name": os.environ.get("GITHUB_REPOSITORY", "")}, "head_branch": "main",
              "created_at": created, "run_started_at": created, "run_attempt": 1}
    extra = ROOT / "runs" / f"{run}.json"
    if extra.exists():
        fields.update(json.loads(extra.read_text()))
        fields["created_given"] = "created_at" in fields and "created_at" in json.loads(extra.read_text())
    return fields


RUN_FIELDS = ("[.id, .path, .event, .head_repository.full_name, .head_branch, .created_at, .run_started_at, "
              ".run_attempt] | @tsv")


def _tsv(run: dict) -> str:
    return "\t".join(str(v) for v in (run["id"], run["path"], run["event"], run["head_repository"]["full_name"],
                                      run["head_branch"], run["created_at"], run["run_started_at"],
                                      run["run_attempt"]))


def workflow_run(args: list[str]) -> int:
    """`gh workflow run FILE --repo R --ref REF -f k=v ...`, recorded."""
    fields, i = {}, 1
    while i < len(args):
        if args[i] in ("-f", "--raw-field"):
            k, v = args[i + 1].split("=", 1)
            fields[k] = v
        i += 2 if args[i].startswith("-") else 1
    with open(ROOT / "workflow-runs.jsonl", "a") as f:
        f.write(json.dumps({"workflow": args[0], "inputs": fields, "argv": args}) + "\n")
    return 0


def api(args: list[str], stdin: str) -> int:
    method, path, jq, paginate = "GET", None, None, False
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-X":
            method, i = args[i + 1], i + 2
        elif a == "--jq":
            jq, i = args[i + 1], i + 2
        elif a == "--input":
            i += 2
        elif a == "--paginate":
            paginate, i = True, i + 1
        else:
            path, i = a.split("?")[0], i + 1
    parts = path.split("/")
    if method == "GET" and len(parts) == 3 and jq == ".default_branch":
        print("main")
        return 0
    if method == "GET" and parts[3:5] == ["actions", "runs"] and len(parts) == 6 and jq in (RUN_FIELDS, ".created_at"):
        if not (ROOT / "runs" / parts[5]).is_dir():
            return fail("HTTP 404: Not Found")
        run = _run_fields(parts[5])
        print(_tsv(run) if jq == RUN_FIELDS else run["created_at"])
        return 0
    if (method == "GET" and parts[3:5] == ["actions", "workflows"] and parts[6:] == ["runs"]
            and jq == f".workflow_runs[] | {RUN_FIELDS}"):
        runs = [_run_fields(r) for r in _run_ids()]
        query = next((a.split("?", 1)[1] for a in args if "?" in a), "")
        since = next((kv[len("created=%3E%3D"):] for kv in query.split("&") if kv.startswith("created=%3E%3D")), "")
        # GitHub lists the runs of the workflow file's id; the file name picks it.
        for run in runs:
            if run["path"].split("/")[-1] == parts[5] and (not run.get("created_given")
                                                           or run["created_at"][:10] >= since):
                print(_tsv(run))
        return 0
    if method == "GET" and parts[3] == "pulls" and len(parts) == 5:
        pull = json.loads((ROOT / "pulls" / f"{parts[4]}.json").read_text())
        if jq == ".head.sha":
            print(pull["head"]["sha"])
        elif jq is None:
            print(json.dumps(pull))
        else:
            return fail(f"fake gh: unsupported --jq {jq}")
        return 0
    if method == "GET" and parts[3] == "pulls" and parts[5:] == ["files"] and jq == ".[].filename":
        print((ROOT / "pulls" / f"{parts[4]}.files").read_text(), end="")
        return 0
    if method == "GET" and parts[3] == "collaborators" and parts[5:] == ["permission"] and jq == ".permission":
        path = ROOT / "permissions.json"
        known = json.loads(path.read_text()) if path.exists() else {}
        if parts[4] not in known:
            return fail("HTTP 404: Not Found (https://api.github.com/)")
        print(known[parts[4]])
        return 0
    if parts[3:] == ["labels"]:
        return labels(method, stdin)
    if parts[3:4] == ["issues"] and (len(parts) == 4 or (len(parts) == 5 and parts[4].isdigit())):
        query = next((a.split("?", 1)[1] for a in args if "?" in a), "")
        return issues(method, parts, stdin, query)
    if parts[3:4] == ["issues"] and parts[5:] == ["labels"] and method == "POST":
        return add_labels(parts[4], stdin)
    if parts[3:4] == ["issues"]:
        return comments(method, parts, stdin, paginate)
    return fail(f"fake gh: unsupported api call {args}")


def comments(method: str, parts: list[str], stdin: str, paginate: bool) -> int:
    if parts[4] == "comments":  # PATCH repos/R/issues/comments/<id>
        files = sorted((ROOT / "comments").glob("*.json"))
        for f in files:
            items = json.loads(f.read_text())
            for c in items:
                if str(c["id"]) == parts[5] and method == "PATCH":
                    c["body"] = json.loads(stdin)["body"]
                    f.write_text(json.dumps(items))
                    print(json.dumps(c))
                    return 0
        return fail(f"fake gh: no comment {parts[5]}")
    store = ROOT / "comments" / f"{parts[4]}.json"
    items = json.loads(store.read_text()) if store.exists() else []
    if method == "GET" and paginate:
        # Two pages, back to back, as `gh api --paginate` prints them.
        half = len(items) // 2
        print(json.dumps(items[:half]) + json.dumps(items[half:]))
        return 0
    if method == "POST":
        new = {"id": 1000 + len(items), "body": json.loads(stdin)["body"], "user": {"login": COMMENT_AUTHOR},
               "html_url": f"https://github.example/pull/{parts[4]}#issuecomment-{1000 + len(items)}"}
        store.parent.mkdir(parents=True, exist_ok=True)
        store.write_text(json.dumps(items + [new]))
        print(json.dumps(new))
        return 0
    return fail(f"fake gh: unsupported comments call {method} {parts}")


def _labels() -> list[str]:
    path = ROOT / "labels.json"
    return json.loads(path.read_text()) if path.exists() else []


def labels(method: str, stdin: str) -> int:
    """GET repos/R/labels (one page), POST repos/R/labels (422 when it exists)."""
    have = _labels()
    if method == "GET":
        print(json.dumps([{"name": n} for n in have]))
        return 0
    if method == "POST":
        if os.environ.get("FAKE_GH_NO_LABEL_WRITE"):
            return fail("HTTP 403: Resource not accessible by integration (https://api.github.com/)")
        name = json.loads(stdin)["name"]
        if name in have:
            return fail("HTTP 422: Validation Failed (already_exists)")
        (ROOT / "labels.json").write_text(json.dumps(have + [name]))
        print(json.dumps({"name": name}))
        return 0
    return fail(f"fake gh: unsupported labels call {method}")


def issues(method: str, parts: list[str], stdin: str, query: str) -> int:
    """Issues of `bench alert`: issues/<n>.json (title, body, labels, state).
    GET repos/R/issues?state=open&labels=L (one page per issue, as
    --paginate prints them), POST repos/R/issues, PATCH repos/R/issues/<n>."""
    folder = ROOT / "issues"
    folder.mkdir(exist_ok=True)
    if method == "GET" and len(parts) == 4:
        from urllib.parse import unquote
        want = {k: unquote(v) for k, v in (kv.split("=", 1) for kv in query.split("&") if "=" in kv)}
        for f in sorted(folder.glob("*.json"), key=lambda f: int(f.stem)):
            it = json.loads(f.read_text())
            if it["state"] == want.get("state", "open") and (
                    "labels" not in want or want["labels"] in [lb["name"] for lb in it["labels"]]) and (
                    "creator" not in want or want["creator"] == it.get("user", {}).get("login")):
                print(json.dumps([it]))
        return 0
    if method == "POST" and len(parts) == 4:
        fields = json.loads(stdin)
        number = len(list(folder.glob("*.json"))) + 1
        it = {"number": number, "title": fields["title"], "body": fields.get("body", ""), "state": "open",
              "labels": [{"name": n} for n in fields.get("labels", []) if n in _labels()],
              "user": {"login": COMMENT_AUTHOR}, "html_url": f"https://github.example/issues/{number}"}
        (folder / f"{number}.json").write_text(json.dumps(it))
        print(json.dumps(it))
        return 0
    if method == "PATCH" and len(parts) == 5 and (folder / f"{parts[4]}.json").exists():
        it = json.loads((folder / f"{parts[4]}.json").read_text())
        it.update({k: v for k, v in json.loads(stdin).items() if k in ("body", "state", "title")})
        (folder / f"{parts[4]}.json").write_text(json.dumps(it))
        print(json.dumps(it))
        return 0
    return fail(f"fake gh: unsupported issues call {method} {parts}")


def add_labels(number: str, stdin: str) -> int:
    """POST repos/R/issues/<n>/labels {"labels": [...]}: added to issues/<n>.json (made if absent)."""
    path = ROOT / "issues" / f"{number}.json"
    path.parent.mkdir(exist_ok=True)
    it = json.loads(path.read_text()) if path.exists() else {
        "number": int(number), "title": "", "body": "", "state": "open", "labels": []}
    have = [lb["name"] for lb in it["labels"]]
    it["labels"] += [{"name": n} for n in json.loads(stdin)["labels"] if n not in have]
    path.write_text(json.dumps(it))
    print(json.dumps(it["labels"]))
    return 0


def fail(message: str) -> int:
    print(message, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
