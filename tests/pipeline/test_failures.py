"""How Dagster handles a failing archive step: transient failures retried with backoff."""

from __future__ import annotations

from dagster import Backoff

from assets.definitions import defs


def test_the_archive_step_retries_with_exponential_backoff() -> None:
    policy = defs.resolve_assets_def("digitized_logs").op.retry_policy
    assert policy is not None and policy.max_retries == 3
    assert policy.delay == 30 and policy.backoff == Backoff.EXPONENTIAL
