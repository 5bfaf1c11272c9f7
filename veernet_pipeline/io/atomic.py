"""Atomic writes: every output appears whole or not at all.

Writers produce a temporary sibling, then `os.replace` renames it over the target, so a crash
never leaves a half-written file where a reader (or the next run's skip check) would trust it.
"""

from __future__ import annotations

import errno
import json
import math
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


@contextmanager
def atomic_path(target: Path | str) -> Iterator[Path]:
    """Yield a temporary path beside `target`; on success rename it onto `target`.

    The temporary name keeps the target's suffix so writers that infer a format from it
    (pandas, matplotlib, tifffile) still work.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}.", suffix=f".tmp{target.suffix}")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        # mkstemp creates 0600; give the output the permissions a plain open() would have.
        if tmp.exists():
            tmp.chmod(0o666 & ~_UMASK)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


@contextmanager
def atomic_dir(target: Path | str, keep_existing: bool = False) -> Iterator[Path]:
    """Yield a temporary folder beside `target`; on success it replaces `target` whole.

    An existing `target` is renamed aside first and removed only after the new one is in
    place, so a reader sees either the old folder or the new one.

    Args:
        target: the folder to produce.
        keep_existing: for a cache whose name fixes its content: when `target` exists by the
            time the new folder is ready (a concurrent writer finished first), keep it and
            discard the new one instead of replacing it.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    try:
        yield tmp
        if keep_existing:
            try:
                os.rename(tmp, target)
            except OSError as exc:
                # rename(2) refuses to replace a non-empty folder: the other writer's copy stays.
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST) or not target.is_dir():
                    raise
        elif target.exists():
            old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".old"))
            os.replace(target, old / target.name)
            os.replace(tmp, target)
            shutil.rmtree(old)
        else:
            os.replace(tmp, target)
    finally:
        _remove_unfinished(tmp)


def _remove_unfinished(tmp: Path, attempts: int = 200) -> None:
    """Remove an unfinished temporary folder even while a straggling writer still adds to it.

    A library that writes from worker threads (MLflow's artifact download) can still be copying
    files when the caller's body has failed: a file landing while `rmtree` walks the folder makes
    its final rmdir fail with ENOTEMPTY. Retrying removes the newcomers; once the folder is gone,
    the straggler's next copy fails on the missing folder instead of recreating it.
    """
    for attempt in range(attempts):
        if not tmp.exists():
            return
        try:
            shutil.rmtree(tmp)
            return
        except OSError as exc:
            if exc.errno != errno.ENOTEMPTY or attempt == attempts - 1:
                raise
            time.sleep(0.01)


def write_text_atomic(path: Path | str, text: str) -> None:
    """Write `text` to `path` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_bytes_atomic(path: Path | str, data: bytes) -> None:
    """Write `data` to `path` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def json_safe(value: Any) -> Any:
    """NaN and infinities -> None and numpy scalars -> Python, recursively, so the JSON stays strict."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, np.generic):
        return json_safe(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_json_atomic(path: Path | str, document: Any) -> None:
    """Write `document` as indented strict JSON (see `json_safe`) to `path` atomically."""
    write_text_atomic(path, json.dumps(json_safe(document), indent=2, allow_nan=False) + "\n")


def write_parquet_atomic(path: Path | str, frame: Any) -> None:
    """Write a pandas frame to Parquet atomically, without its index or `attrs`.

    `attrs` (e.g. the manifest's raw folder) mean nothing beyond the frame they were set on, so a
    frame derived from another never carries them into a file of its own.
    """
    frame = frame.copy(deep=False)
    frame.attrs = {}
    with atomic_path(path) as tmp:
        frame.to_parquet(tmp, index=False)
