"""Atomic writes: whole or nothing, with ordinary permissions."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from veernet_pipeline.io.atomic import atomic_path, write_text_atomic


def test_outputs_get_the_permissions_a_plain_open_gives(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    write_text_atomic(target, "x")
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    write_text_atomic(target, "old")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("crash mid-write")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]
