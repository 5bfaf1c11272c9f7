"""Evaluation: class probabilities -> curves (`extract`), metrics against native LAS (`metrics`),
readable outputs (`report`) and the held-out evaluation stage (`evaluate.evaluate_model`)."""
