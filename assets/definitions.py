"""The code location `dagster dev` loads (see workspace.yaml)."""

from __future__ import annotations

from dagster import Definitions

from assets.checks import CHECKS
from assets.digitized import digitized_logs
from assets.evaluation import model_evaluation
from assets.jobs import digitize_archive, digitize_archive_dask, full_pipeline, nightly_archive
from assets.models import binary_model, multiclass_model
from assets.resources import PipelineResource
from assets.review import review_queue
from assets.scans import raw_scans, validation
from assets.sensors import champion_sensor, raw_scans_sensor
from assets.synthetic import synthetic_sets

ASSETS = [raw_scans, validation, synthetic_sets, binary_model, multiclass_model, model_evaluation, digitized_logs,
          review_queue]

defs = Definitions(
    assets=ASSETS,
    asset_checks=CHECKS,
    jobs=[full_pipeline, digitize_archive, digitize_archive_dask],
    schedules=[nightly_archive],
    sensors=[raw_scans_sensor, champion_sensor],
    resources={"pipeline": PipelineResource()},
)
