"""Measure: what runs on the runner. `bench run` -> runner (parent) -> child
(one benchmark) -> harness (the timing protocol); backends/ and workloads/
are what the child drives; environment and failures describe what happened."""
