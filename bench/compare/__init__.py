"""`bench compare`: what a pull request (or a Keras ref) did, per benchmark.

The pipeline, one module per step:
  baseline.load_baseline / head.load_head   read (data folder or records)
  outcome.build_outcome                     verdicts.compare + envdiff (pure)
    stats                                   the tests, interval and dips (pure)
  markdown.render_markdown / jsonout.render_json
"""
