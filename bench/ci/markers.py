"""The hidden markers of an alert issue's body (standard library only: bench
triage reads them without the analysis stack). bench.ci.alert writes them."""

from __future__ import annotations

import re

SERIES = re.compile(r"<!-- bench:alert:series (\S+) -->")       # the series, URL-quoted
STATE = re.compile(r"<!-- bench:alert:state (\{.*?\}) -->")      # the change it alerts on, as JSON
