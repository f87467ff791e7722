#!/usr/bin/env python3
"""The PR benchmark's claim, as JSON on stdout: {"head_sha": ..., "pr": ...}.

    python scripts/pr-info.py PR_NUMBER HEAD_SHA > pr.json

pr-bench.yml uploads it with the records; scripts/pr-comment.py reads it as
untrusted data and checks it against GitHub before trusting it.
"""

import json
import re
import sys


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not re.fullmatch(r"[1-9][0-9]*", argv[0]) or not re.fullmatch(r"[0-9a-f]{40}", argv[1]):
        print(f"usage: pr-info.py PR_NUMBER HEAD_SHA (got {argv!r}; expected a number and 40 hex digits)",
              file=sys.stderr)
        return 2
    print(json.dumps({"head_sha": argv[1], "pr": int(argv[0])}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
