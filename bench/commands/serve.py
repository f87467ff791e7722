"""Serve a built site over http on this machine: `python -m bench serve SITE`.

A thin http.server for looking at the dashboard locally (browsers refuse to
fetch data/index.json from a file:// page). Ctrl-C stops it.
"""

from __future__ import annotations

import functools
import sys
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench.errors import UsageError


def add_arguments(parser):
    parser.add_argument("site", metavar="SITE", help="a folder written by `bench site --out SITE`")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")


class _Handler(SimpleHTTPRequestHandler):
    quiet = False

    def end_headers(self):
        # A rebuilt site should show at once, not after the browser's heuristic cache expires.
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format, *args):
        if not self.quiet:
            super().log_message(format, *args)


class _QuietHandler(_Handler):
    quiet = True


def make_server(site: str | Path, host: str = "127.0.0.1", port: int = 8000,
                quiet: bool = False) -> ThreadingHTTPServer:
    """An http server for `site` (not yet serving; call serve_forever).

    quiet: no request log on stderr (tests and scripts).
    """
    site = Path(site)
    if not (site / "index.html").is_file():
        raise FileNotFoundError(f"SITE {site}: no index.html; expected a folder written by "
                                f"`python -m bench site --data DIR --out {site}`")
    handler = _QuietHandler if quiet else _Handler
    return ThreadingHTTPServer((host, port), functools.partial(handler, directory=str(site)))


def main(args) -> int:
    try:
        server = make_server(args.site, args.host, args.port)
    except OSError as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {e.strerror or e}; "
                         f"expected a free port (--port 0 picks one)") from None
    host, port = server.server_address[:2]
    print(f"bench serve: {args.site} at http://{host}:{port}/ (Ctrl-C stops)", file=sys.stderr)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0
