"""What Dagster does when a step fails: retry what may pass next time, stop on what an operator must fix."""

from __future__ import annotations

from dagster import Backoff, Jitter, RetryPolicy

# The archive step's transient failures (an MLflow store or network share briefly unreachable, a
# worker killed for memory) are retried 3 times, 30 s, 60 s and 120 s later (+-50 % jitter, so
# concurrent runs do not retry in step). Per-scan failures never fail the step: the archive records
# them and retries them on later runs, up to `infer.max_attempts`.
ARCHIVE_RETRY = RetryPolicy(max_retries=3, delay=30, backoff=Backoff.EXPONENTIAL, jitter=Jitter.PLUS_MINUS)
