"""Evaluation: the truth a reading is scored against (`truth`), metrics (`metrics`), which read curve
is which true one (`identity`), the held-out evaluation stage (`evaluate.evaluate_model`), the
figures per curve, style, curve count and height (`summary`), readable outputs (`report`) and the
classical baseline (`classical`). Curves are read with `reading`, the same path inference takes."""
