"""MLflow models-from-code entry point for a registered VeerNet.

MLflow runs this file to rebuild the model: it holds no pickled object, only our code and the
weights logged beside it (`weights.pt` + `model.json`). Loaded as a pyfunc, `predict` takes one
uint8 scan (H, W) and returns class probabilities (C, H, W).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mlflow
import numpy as np


class VeerNetPyfunc(mlflow.pyfunc.PythonModel):
    """Class probabilities for one scan, from the weights logged with the model."""

    def load_context(self, context: Any) -> None:
        from veernet_pipeline.model.veernet import load_model

        self.model = load_model(Path(context.artifacts["weights"]).parent)

    def predict(self, context: Any, model_input: np.ndarray, params: dict[str, Any] | None = None) -> np.ndarray:
        from veernet_pipeline.reading.predict import predict_probs

        tile_width = int((params or {}).get("tile_width", 2048))
        tile_overlap = int((params or {}).get("tile_overlap", 128))
        return predict_probs(self.model, np.asarray(model_input, dtype=np.uint8), tile_width, tile_overlap)


mlflow.models.set_model(VeerNetPyfunc())
