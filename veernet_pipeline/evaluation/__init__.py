"""Evaluation: metrics against native LAS (`metrics`), the held-out evaluation stage
(`evaluate.evaluate_model`), readable outputs (`report`) and the classical baseline (`classical`).
Curves are read with `reading`, the same path inference takes."""
