"""Resources: the one bridge from Dagster run config to params.yaml."""

from __future__ import annotations

from typing import Any

from dagster import ConfigurableResource
from pydantic import Field

from assets.failures import operator_failures
from veernet_pipeline import stages
from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.stages import StageResult


class PipelineResource(ConfigurableResource):
    """Where params.yaml is and how this run departs from it.

    Leave everything empty to run exactly what params.yaml says. In the launchpad, set
    `profile` (test, demo, cpu, paper) or `overrides` (`train_binary.epochs=3`, as
    `dvc exp run -S` takes them) for one run without editing the file.
    """

    params_path: str = Field(default="", description="params.yaml path; empty = $VEERNET_PARAMS or the nearest one")
    profile: str = Field(default="", description="profile name; empty = $VEERNET_PROFILE or params.yaml's")
    overrides: list[str] = Field(default=[], description="section.key=value overrides applied last")

    def settings(self) -> Settings:
        """The run's settings; bad params fail the step with what to fix (`assets.failures`)."""
        with operator_failures():
            return load_settings(self.params_path or None, self.profile or None, self.overrides)

    def run(self, stage: str, **options: Any) -> StageResult:
        """Run one stage on this run's settings; an operator's error fails the step with its advice."""
        settings = self.settings()
        with operator_failures():
            return stages.run(stage, settings, **options)
