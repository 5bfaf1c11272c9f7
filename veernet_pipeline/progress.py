"""Progress bars that suit both a terminal and a captured log (Dagster, CI, DVC).

On a terminal the bar redraws every 0.5 s; in a captured stream each redraw is a new line, so
it updates every 30 s instead of flooding the run log.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any, TypeVar

from tqdm import tqdm

T = TypeVar("T")


def progress(iterable: Iterable[T], **kwargs: Any) -> tqdm:
    """`tqdm(iterable, ...)` with a redraw interval chosen by whether stderr is a terminal."""
    kwargs.setdefault("mininterval", 0.5 if sys.stderr.isatty() else 30.0)
    return tqdm(iterable, **kwargs)
