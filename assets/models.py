"""Trained VeerNet models, each registered in MLflow.

Both resume from their own checkpoints: a re-materialisation after a crash continues the run,
and checkpoints of other inputs or params are set aside rather than resumed.
"""

from __future__ import annotations

from dagster import MaterializeResult, asset

from assets.metadata import materialized, stage_spec
from assets.resources import PipelineResource


@asset(deps=["synthetic_binary"], group_name="models", kinds={"pytorch", "mlflow"}, **stage_spec("train_binary"))
def binary_model(pipeline: PipelineResource) -> MaterializeResult:
    """VeerNet trained on curve vs background (physical and effective batch 1); `veernet-binary` in MLflow."""
    return materialized(pipeline.run("train_binary", resume=True))


@asset(deps=["synthetic_multiclass", "binary_model"], group_name="models", kinds={"pytorch", "mlflow"},
       **stage_spec("train_multiclass"))
def multiclass_model(pipeline: PipelineResource) -> MaterializeResult:
    """Three-class VeerNet seeded from the binary weights; `veernet-multiclass` in MLflow."""
    return materialized(pipeline.run("train_multiclass", resume=True))
