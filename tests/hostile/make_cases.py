"""Writes the hostile-record corpus: one file per case in tests/hostile/cases/,
and expected.json, the table of what must happen to each.

  .venv/bin/python tests/hostile/make_cases.py

Every case is the same good record (BASE) with one thing wrong, so each file
tests one class. Expected outcomes (tests/test_hostile.py checks them):
  publish  "added"   the gate admits it; the outputs must escape its text
           "refused" the gate refuses it with one line holding `reason`
  read     "ok"      bench report/site/compare read it (escaping its text)
           "skipped" they skip it with one line naming the file
The gate runs with the provenance of run 4242 of keras-team/keras-nightly-bench
(schedule, created 2026-11-30T02:17:00Z, 2 attempts so far), each file in an artifact
folder as collect-artifacts.sh downloads it: an admitted case in its own job's
artifact (record-4242-1-dev-<name>-jax, its device renamed to match), every
refused case in the artifact of BASE's job, record-4242-1-rtx-5070-ti-jax (so
a case claiming another device, backend or attempt is a record in another
job's artifact), and only the models and modes of bench/benchmarks.yaml.
Large cases (a 3 MB file, 100,000 nested lists, a flood of files in one
artifact) are made by the test itself.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
BASE = {
    "schema_version": 1,
    "run": {"id": "4242", "attempt": 1, "event": "schedule", "started_at": "2026-11-30T02:20:00Z",
            "repository": "keras-team/keras-nightly-bench",
            "url": "https://github.com/keras-team/keras-nightly-bench/actions/runs/4242"},
    "target": {"backend": "jax", "keras_backend": "jax", "device": "rtx-5070-ti"},
    "environment": {"keras_version": "3.16.0.dev2026113002", "keras_source": "nightly", "python": "3.11.7"},
    "results": [
        {"model": "cnn", "mode": "train", "status": "ok", "value": 1000.0, "unit": "samples/s",
         "samples": [990.0, 1000.0, 1010.0]},
        {"model": "mlp", "mode": "predict", "status": "failed",
         "error": {"kind": "crash", "message": "killed by SIGSEGV"}},
    ],
}
INJECTION = ("x\n<!-- bench:table:end -->\n[click](http://evil.example) ![i](http://evil.example/x.png) "
             "<script>alert(1)</script> | @keras-team `code` $x$ \u202eevil")
# GitHub math (colour, size) and issue references (a link, and a notification there)
MATH_AND_REFERENCES = "$\\color{red}{\\huge x}$ see #1, evil/fork#2 and GH-3"


def edit(**changes):
    """A copy of BASE with dotted paths set ('results.0.value': -5)."""
    rec = copy.deepcopy(BASE)
    for dotted, value in changes.items():
        *head, last = dotted.split(".")
        obj = rec
        for k in head:
            obj = obj[int(k)] if isinstance(obj, list) else obj[k]
        if isinstance(obj, list):
            obj[int(last)] = value
        else:
            obj[last] = value
    return rec


def text(rec) -> str:
    return json.dumps(rec, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def nested(levels: int):
    v = "bottom"
    for _ in range(levels):
        v = {"x": v}
    return v


GOOD = text(BASE)
# name -> (file text or bytes, publish, reason substring, read)
CASES = {
    # -- strict JSON --------------------------------------------------------------
    "nan_in_environment": (GOOD.replace('"python": "3.11.7"', '"python": NaN'), "refused",
                           "field environment.python is nan; expected a finite number", "skipped"),
    "infinity_value": (GOOD.replace('"value": 1000.0', '"value": Infinity'), "refused",
                       "field results[0].value is inf", "skipped"),
    "overflow_float_sample": (GOOD.replace("990.0", "1e999"), "refused", "field results[0].samples[0] is inf",
                              "skipped"),
    "huge_integer": (GOOD.replace('"python": "3.11.7"', '"python": ' + "9" * 5000), "refused",
                     "not valid JSON", "skipped"),
    "duplicate_key_value": (GOOD.replace('"value": 1000.0', '"value": 1000.0, "value": 1.0'), "refused",
                            "key 'value' appears twice", "ok"),
    "duplicate_key_top": (GOOD.replace('"schema_version": 1', '"schema_version": 1, "schema_version": 1'),
                          "refused", "key 'schema_version' appears twice", "ok"),
    "lone_surrogate_message": (GOOD.replace('"killed by SIGSEGV"', '"killed \\ud800 by SIGSEGV"'), "refused",
                               "field results[1].error.message holds a lone UTF-16 surrogate", "skipped"),
    "lone_surrogate_key": (GOOD.replace('"python": "3.11.7"', '"python\\udfff": "3.11.7"'), "refused",
                           "holds a lone UTF-16 surrogate ('\\udfff')", "skipped"),
    "not_utf8": (GOOD.replace("3.11.7", "3.11.7 caf\u00e9").encode("latin-1"), "refused", "not UTF-8 text",
                 "skipped"),
    "truncated": (GOOD[:200], "refused", "not valid JSON", "skipped"),
    "top_level_array": ("[" + GOOD + "]", "refused", "expected a JSON object", "skipped"),
    "nested_40_levels": (text(edit(**{"environment.deep": nested(40)})), "refused",
                         "levels deep; the cap is 16", "ok"),
    # -- sizes --------------------------------------------------------------------
    "string_too_long": (text(edit(**{"results.1.error.message": "A" * 20_001})), "refused",
                        "field results[1].error.message is 20001 characters; the cap is 20000", "ok"),
    "too_many_results": (text(edit(results=[dict(BASE["results"][0], model=f"m{i}") for i in range(201)])),
                         "refused", "holds 201 results; the cap is 200", "ok"),
    "too_many_samples": (text(edit(**{"results.0.samples": [1000.0] * 10_001})), "refused",
                         "results[0].samples holds 10001 samples; the cap is 10000", "ok"),
    # -- contract: schema, numbers, optional field types ------------------------
    "negative_value": (text(edit(**{"results.0.value": -5})), "refused", "results[0].value", "skipped"),
    "negative_sample": (text(edit(**{"results.0.samples": [-1.0, 1000.0]})), "refused",
                        "results[0].samples[0] is -1.0", "skipped"),
    "zero_value": (text(edit(**{"results.0.value": 0})), "refused", "results[0].value", "skipped"),
    "schema_version_2": (text(edit(schema_version=2)), "refused", "schema_version 2 is newer", "skipped"),
    "attempt_is_bool": (text(edit(**{"run.attempt": True})), "refused", "run.attempt", "skipped"),
    "url_is_number": (text(edit(**{"run.url": 5})), "refused", "run.url", "skipped"),
    "protocol_is_string": (text(edit(**{"run.protocol": "2"})), "refused", "field run.protocol is '2'", "skipped"),
    "keras_source_is_number": (text(edit(**{"environment.keras_source": 5})), "refused",
                               "field environment.keras_source is 5", "skipped"),
    "workers_is_string": (text(edit(**{"results.0.workers": "many"})), "refused",
                          "field results[0].workers is 'many'", "skipped"),
    "timed_window_backwards": (text(edit(**{"results.0.workers": [
        {"value": 1000.0, "samples": [1000.0], "status": "ok", "disturbed": False, "timed_window": [5.0, 1.0]}]})),
        "refused", "field results[0].workers[0].timed_window is [5.0, 1.0]", "skipped"),
    "reference_seconds_is_string": (text(edit(**{"results.0.workers": [
        {"value": 1000.0, "samples": [1000.0], "status": "ok", "disturbed": False, "reference_seconds": "2ms"}]})),
        "refused", "field results[0].workers[0].reference_seconds is '2ms'", "skipped"),
    "reference_median_seconds_is_negative": (text(edit(**{"results.0.workers": [
        {"value": 1000.0, "samples": [1000.0], "status": "ok", "disturbed": False, "reference_seconds": 0.002,
         "reference_median_seconds": -0.002}]})),
        "refused", "field results[0].workers[0].reference_median_seconds is -0.002", "skipped"),
    "latency_p50_is_string": (text(edit(**{"results.0.latency": {"p50_ms": "fast"}})), "refused",
                              "field results[0].latency.p50_ms is 'fast'", "skipped"),
    "memory_negative_bytes": (text(edit(**{"results.0.memory": {"host_peak_bytes": -1}})), "refused",
                              "field results[0].memory.host_peak_bytes is -1", "skipped"),
    "reference_ratio_is_string": (text(edit(**{"results.0.reference": {"value": 990.0, "ratio": "1.01", "pairs": 5}})),
                                  "refused", "field results[0].reference.ratio is '1.01'", "skipped"),
    "reference_no_pairs": (text(edit(**{"results.0.reference": {"value": 990.0, "ratio": 1.01, "pairs": 0}})),
                           "refused", "field results[0].reference.pairs is 0", "skipped"),
    "night_not_a_date": (text(edit(**{"run.night": "yesterday"})), "refused", "run.night", "skipped"),
    "year_one_with_offset": (text(edit(**{"run.started_at": "0001-01-01T00:00:00+01:00"})), "refused",
                             "between years 1 and 9999", "skipped"),
    # RFC 3339 only: Python's fromisoformat takes these, other readers do not
    "started_at_week_date": (text(edit(**{"run.started_at": "2026-W48-1T02:20:00Z"})), "refused",
                             "field run.started_at is '2026-W48-1T02:20:00Z'; expected an RFC 3339 date-time",
                             "skipped"),
    "started_at_without_seconds": (text(edit(**{"run.started_at": "2026-11-30T02:20Z"})), "refused",
                                   "field run.started_at is '2026-11-30T02:20Z'; expected an RFC 3339", "skipped"),
    "started_at_with_a_space": (text(edit(**{"run.started_at": "2026-11-30 02:20:00Z"})), "refused",
                                "expected an RFC 3339 date-time", "skipped"),
    "started_at_offset_without_colon": (text(edit(**{"run.started_at": "2026-11-30T02:20:00+0000"})), "refused",
                                        "expected an RFC 3339 date-time", "skipped"),
    # -- bounded numbers: every sum, quantile and ratio of the statistics stays finite
    "huge_finite_value": (text(edit(**{"results.0.value": 1e308, "results.0.samples": [1e308, 1e308]})),
                          "refused", "field results[0].value is 1e+308; expected a finite number in [1e-12, 1e+15]",
                          "skipped"),
    "huge_sample": (text(edit(**{"results.0.samples": [990.0, 1e16]})), "refused",
                    "field results[0].samples[1] is 1e+16", "skipped"),
    "subnormal_value": (text(edit(**{"results.0.value": 5e-324})), "refused", "field results[0].value is 5e-324",
                        "skipped"),
    "huge_reference_ratio": (text(edit(**{"results.0.reference": {"value": 990.0, "ratio": 1e308, "pairs": 5}})),
                             "refused", "field results[0].reference.ratio is 1e+308", "skipped"),
    "huge_worker_samples": (text(edit(**{"results.0.workers": [
        {"value": 1000.0, "samples": [1e300, 1e300], "status": "ok", "disturbed": False}]})),
        "refused", "field results[0].workers[0].samples is [1e+300, 1e+300]", "skipped"),
    "huge_memory_bytes": (text(edit(**{"results.0.memory": {"host_peak_bytes": 10 ** 30}})), "refused",
                          "field results[0].memory.host_peak_bytes is 10000000", "skipped"),
    # -- dates and provenance -----------------------------------------------------
    "dated_9999": (text(edit(**{"run.started_at": "9999-12-31T23:00:00Z"})), "refused",
                   "run.started_at is 9999-12-31T23:00:00Z, after 2026-12-02T04:17:00Z", "skipped"),
    "night_9999": (text(edit(**{"run.night": "9999-12-31"})), "refused", "run.night is 9999-12-31", "skipped"),
    "before_its_run": (text(edit(**{"run.started_at": "2026-01-01T00:00:00Z"})), "refused",
                       "before its run was created", "ok"),
    "other_run_id": (text(edit(**{"run.id": "999"})), "refused", "run.id is '999'; expected '4242'", "ok"),
    # bench run --reference: the two sides of the artifact's own run are its records too
    "reference_side_of_its_run": (text(edit(**{"run.id": "4242-b", "run.ab": {
        "id": "4242", "side": "b", "mode": "duet", "reference": True}})), "added", "", "ok"),
    "side_of_another_run": (text(edit(**{"run.id": "999-b", "run.ab": {"id": "999", "side": "b"}})), "refused",
                            "run.id is '999-b'; expected '4242'", "ok"),
    "side_named_for_the_other_side": (text(edit(**{"run.id": "4242-a", "run.ab": {"id": "4242", "side": "b"}})),
                                      "refused", "run.id is '4242-a'; expected '4242'", "ok"),
    "other_repository": (text(edit(**{"run.repository": "evil/fork"})), "refused",
                         "run.repository is 'evil/fork'", "ok"),
    "pull_request_event": (text(edit(**{"run.event": "pull_request"})), "refused",
                           "run.event is 'pull_request'; expected 'schedule'", "ok"),
    "attempt_not_yet_run": (text(edit(**{"run.attempt": 7})), "refused", "run.attempt is 7; expected at most 2", "ok"),
    "attempt_is_float": (text(edit(**{"run.attempt": 1.0})), "refused",
                         "field run.attempt is 1.0; expected a JSON integer", "ok"),
    # -- the job that made it: device, backend and attempt against the artifact's name
    "device_of_another_job": (text(edit(**{"target.device": "ryzen-5800x3d"})), "refused",
                              "its artifact is 'record-4242-1-rtx-5070-ti-jax', not the job of its run.attempt 1, "
                              "target.device 'ryzen-5800x3d' and target.backend 'jax'; expected an artifact named "
                              "'record-4242-1-ryzen-5800x3d-jax'", "ok"),
    "backend_of_another_job": (text(edit(**{"target.backend": "torch", "target.keras_backend": "torch"})),
                               "refused", "expected an artifact named 'record-4242-1-rtx-5070-ti-torch'", "ok"),
    "attempt_of_another_job": (text(edit(**{"run.attempt": 2})), "refused",
                               "expected an artifact named 'record-4242-2-rtx-5070-ti-jax'", "ok"),
    # the CPU box's job forging the GPU's point of tonight from the next morning
    "next_day_forgery_for_tonight": (text(edit(**{"target.device": "ryzen-5800x3d",
                                                  "run.started_at": "2026-12-01T01:00:00Z",
                                                  "run.night": "2026-11-30"})), "refused",
                                     "expected an artifact named 'record-4242-1-ryzen-5800x3d-jax'", "ok"),
    # -- run.night: the run's own night or the one before, never a past night
    "night_rewrites_a_past_night": (text(edit(**{"run.night": "2026-11-01"})), "refused",
                                    "field run.night is 2026-11-01; expected 2026-11-30 or 2026-11-29, the night "
                                    "of its run (created 2026-11-30T02:17:00Z) or the one before", "ok"),
    "night_year_one": (text(edit(**{"run.night": "0001-01-01"})), "refused", "field run.night is 0001-01-01", "ok"),
    "night_the_one_before": (text(edit(**{"run.night": "2026-11-29"})), "added", "", "ok"),
    # -- only the models and modes benchmarks.yaml names
    "model_not_in_benchmarks_yaml": (text(edit(**{"results.0.model": "resnet"})), "refused",
                                     "field results[0].model is 'resnet'; expected one that benchmarks.yaml names: "
                                     "cnn, mlp", "ok"),
    "mode_not_in_benchmarks_yaml": (text(edit(**{"results.0.mode": "inference"})), "refused",
                                    "field results[0].mode is 'inference'; expected one that benchmarks.yaml "
                                    "names: latency, predict, train", "ok"),
    # -- labels: path tricks, look-alikes, invisible characters ----------------
    "device_65_characters": (text(edit(**{"target.device": "d" * 65})), "refused",
                             "at most 64 characters (it names the file on the branch)", "ok"),
    "attempt_huge": (text(edit(**{"run.attempt": 10 ** 300})), "refused", "expected at most 1", "ok"),
    "model_200_characters": (text(edit(**{"results.0.model": "m" * 200})), "refused",
                             "field results[0].model is 'mmmm", "ok"),
    "device_path_traversal": (text(edit(**{"target.device": "../../../etc/passwd"})), "refused",
                              "field target.device is '../../../etc/passwd'", "ok"),
    "backend_with_slash": (text(edit(**{"target.backend": "jax/../../x"})), "refused", "field target.backend", "ok"),
    "device_dotdot": (text(edit(**{"target.device": ".."})), "refused", "field target.device is '..'", "ok"),
    "device_with_space": (text(edit(**{"target.device": "rtx 5070-ti"})), "refused",
                          "field target.device is 'rtx 5070-ti'", "ok"),
    "device_lookalike_hyphen": (text(edit(**{"target.device": "rtx\u20115070-ti"})), "refused",
                                "field target.device is 'rtx\\u20115070-ti'", "ok"),
    "run_id_with_newline": (text(edit(**{"run.id": "4242\n"})), "refused", "field run.id is '4242\\n'", "ok"),
    "model_cyrillic_lookalike": (text(edit(**{"results.0.model": "\u0441nn"})), "refused",
                                 "field results[0].model is '\\u0441nn'", "ok"),
    "model_bidi_override": (text(edit(**{"results.0.model": "cnn\u202e"})), "refused",
                            "field results[0].model is 'cnn\\u202e'", "ok"),
    "mode_with_marker_line": (text(edit(**{"results.0.mode": "train\n<!-- bench:table:end -->"})), "refused",
                              "field results[0].mode", "ok"),
    # -- admitted: the outputs must escape their text ---------------------------
    "message_injection": (text(edit(**{"results.1.error.message": INJECTION})), "added", "", "ok"),
    "message_math_and_references": (text(edit(**{"results.1.error.message": MATH_AND_REFERENCES})), "added", "",
                                    "ok"),
    "model_with_dollars": (text(edit(**{"results.0.model": "cnn$x^2$"})), "refused",
        "expected one that benchmarks.yaml names", "ok"),
    "model_unbalanced_mathtext": (text(edit(**{"results.0.model": "a$b\\frac{"})), "refused",
        "expected one that benchmarks.yaml names", "ok"),
    "model_html": (text(edit(**{"results.0.model": "<img src=x onerror=alert(1)>"})), "refused",
        "expected one that benchmarks.yaml names", "ok"),
    "unit_with_pipe_and_backtick": (text(edit(**{"results.0.unit": "s|`x`"})), "added", "", "ok"),
    "url_javascript": (text(edit(**{"run.url": "javascript:alert(1)"})), "added", "", "ok"),
    "url_other_repository": (text(edit(**{"run.url": "https://github.com/evil/fork/actions/runs/4242"})),
                             "added", "", "ok"),
    "url_other_host": (text(edit(**{"run.url": "http://evil.example/keras-team/keras-nightly-bench/actions/runs/1"})),
                       "added", "", "ok"),
    "keras_version_escape_sequence": (text(edit(**{"environment.keras_version": "3.16\u001b[2J\n::error::pwned"})),
                                      "added", "", "ok"),
}


def main() -> None:
    out = HERE / "cases"
    out.mkdir(exist_ok=True)
    expected = {}
    for name, (content, publish, reason, read) in CASES.items():
        if publish == "added":  # a device of its own: admitted cases must not share a path on the branch
            rec = json.loads(content)
            rec["target"]["device"] = "dev-" + name.replace("_", "-")
            content = text(rec)
        data = content if isinstance(content, bytes) else content.encode("utf-8")
        (out / f"{name}.json").write_bytes(data)
        expected[name] = {"publish": publish, "reason": reason, "read": read}
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"{len(CASES)} cases in {out}")


if __name__ == "__main__":
    main()
