"""Functions a test runs inside ingest's worker processes; this module imports nothing heavy itself."""

from __future__ import annotations

import resource
import sys


def heavy_modules() -> list[str]:
    """The heavy packages loaded in this process (a worker should hold none)."""
    return sorted(name for name in ("torch", "pandas", "great_expectations", "dagster") if name in sys.modules)


def address_space_limit() -> int:
    """This process's soft RLIMIT_AS, bytes."""
    return resource.getrlimit(resource.RLIMIT_AS)[0]
