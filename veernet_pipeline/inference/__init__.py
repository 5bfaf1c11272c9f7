"""Inference: one scan -> LAS + QC picture (`digitize`), and the idempotent batch over a validated
archive (`archive.digitize_validated`). Reading a scan itself lives in `reading`."""
