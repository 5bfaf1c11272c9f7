"""What Dagster does when a step fails: retry what may pass next time, stop on what an operator must fix."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from dagster import Backoff, Failure, Jitter, MetadataValue, RetryPolicy

from veernet_pipeline.errors import OperatorError

# The archive step's transient failures (an MLflow store or network share briefly unreachable, a
# worker killed for memory) are retried 3 times, 30 s, 60 s and 120 s later (+-50 % jitter, so
# concurrent runs do not retry in step). Per-scan failures never fail the step: the archive records
# them and retries them on later runs, up to `infer.max_attempts`.
ARCHIVE_RETRY = RetryPolicy(max_retries=3, delay=30, backoff=Backoff.EXPONENTIAL, jitter=Jitter.PLUS_MINUS)


@contextmanager
def operator_failures() -> Iterator[None]:
    """Turn the library's `OperatorError`s into a `Failure` the run page shows first, with the advice first.

    Not retried (`allow_retries=False`): waiting does not promote a model or fill an archive.
    Any other exception passes through unchanged, under the retry policy of its step.
    """
    try:
        yield
    except OperatorError as exc:
        raise Failure(
            description=f"{exc.advice}\n\nCause: {exc}",
            metadata={"what to do": MetadataValue.md(exc.advice), "cause": MetadataValue.text(str(exc)),
                      "error": MetadataValue.text(type(exc).__name__)},
            allow_retries=False,
        ) from exc
