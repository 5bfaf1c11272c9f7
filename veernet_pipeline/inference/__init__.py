"""Inference: tiled class probabilities (`predict`), one scan -> LAS + QC (`digitize`), and the
idempotent batch over a validated archive (`archive.digitize_archive`)."""
