"""The multiclass model measured against native LAS on held-out logs."""

from __future__ import annotations

from dagster import MaterializeResult, asset

from assets.metadata import materialized, stage_spec
from assets.resources import PipelineResource


@asset(deps=["multiclass_model", "synthetic_multiclass", "foreign_scans"], group_name="evaluation",
       kinds={"pytorch", "mlflow"}, **stage_spec("evaluate"))
def model_evaluation(pipeline: PipelineResource) -> MaterializeResult:
    """R^2 / MAE / MSE per curve, IoU / F1 per class; moves `champion` when the gate passes."""
    return materialized(pipeline.run("evaluate"))
