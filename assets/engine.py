"""The distributed engine: dagster-dask's executor, made to carry partitioned runs.

dagster-dask 0.29.27 hands each step to the cluster with `client.submit(..., dagster_run, ...)`.
dask (2024.12 on) walks every tuple in a task's arguments looking for futures, and a run of one
tranche or a range of tranches carries its partitions as a `KeyRangesPartitionsSubset`, a
Dagster record that refuses iteration: the run fails before any step starts ("Iteration is not
allowed on `@record` KeyRangesPartitionsSubset"). That subset says nothing the run's tags do not
(`dagster/partition`, or the range tags; Dagster's own event code ignores it too), so it is left
out of the copy of the run sent to the workers; everything else is dagster-dask's, unchanged.
Why Dask and how to run a cluster: docs/runbooks/scale-out.md.
"""

from __future__ import annotations

from collections.abc import Iterator

from dagster import executor, multiple_process_executor_requirements
from dagster._core.definitions.partitions.subset.key_ranges import KeyRangesPartitionsSubset
from dagster._core.events import DagsterEvent
from dagster._core.execution.context.system import PlanOrchestrationContext
from dagster._core.execution.plan.plan import ExecutionPlan
from dagster_dask import dask_executor
from dagster_dask.executor import DaskExecutor
from dagster_shared.record import copy


class TrancheDaskExecutor(DaskExecutor):
    """dagster-dask's executor, sending workers a run whose partitions are named by its tags alone."""

    def execute(self, plan_context: PlanOrchestrationContext, execution_plan: ExecutionPlan) -> Iterator[DagsterEvent]:
        run = plan_context.dagster_run
        if isinstance(run.partitions_subset, KeyRangesPartitionsSubset):
            plan_data = plan_context.plan_data._replace(dagster_run=copy(run, partitions_subset=None))
            plan_context = PlanOrchestrationContext(plan_data, plan_context.log, plan_context.executor,
                                                    plan_context.output_capture, plan_context.resume_from_failure)
        yield from super().execute(plan_context, execution_plan)


@executor(name="dask", requirements=multiple_process_executor_requirements(),
          config_schema=dask_executor.config_schema)
def tranche_dask_executor(init_context) -> TrancheDaskExecutor:  # noqa: ANN001 - Dagster's InitExecutorContext
    """dagster-dask's `dask` executor and its config (`cluster: {existing: {address: ...}}`, `local`, ...)."""
    ((cluster_type, cluster_configuration),) = init_context.executor_config["cluster"].items()
    return TrancheDaskExecutor(cluster_type, cluster_configuration)
