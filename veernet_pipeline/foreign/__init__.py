"""The foreign test renderer: evaluation scans drawn by other means than the generator (docs/foreign-renderer.md).

It shares no code with `veernet_pipeline.synthetic` (tests/unit/test_layers.py keeps the two
packages apart): it reads the same contract (`io`: wells, splits, LAS, sidecar, classes, sets) and
draws with matplotlib. It renders only test wells, and its set is evaluation-only.
"""
