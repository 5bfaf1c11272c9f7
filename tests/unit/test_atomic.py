"""Atomic writes: whole or nothing, with ordinary permissions."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from veernet_pipeline.io.atomic import atomic_dir, atomic_path, write_json_atomic, write_text_atomic


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


def test_write_json_atomic_keeps_json_strict(tmp_path: Path) -> None:
    document = {"r2": float("nan"), "mae": np.float32(0.5), "n": np.int64(3), "per_class": [1.0, float("inf")],
                1: (np.nan, 2)}
    write_json_atomic(tmp_path / "m.json", document)
    text = (tmp_path / "m.json").read_text()
    assert json.loads(text) == {"r2": None, "mae": 0.5, "n": 3, "per_class": [1.0, None], "1": [None, 2]}
    assert "NaN" not in text and "Infinity" not in text


def test_a_cache_folder_another_writer_finished_first_is_kept(tmp_path: Path) -> None:
    target = tmp_path / "cache" / "model-v1"
    with atomic_dir(target, keep_existing=True) as mine:
        (mine / "weights").write_text("mine")
        # A concurrent writer of the same folder completes while this one is still writing.
        with atomic_dir(target, keep_existing=True) as theirs:
            (theirs / "weights").write_text("theirs")
    assert (target / "weights").read_text() == "theirs"
    assert [p.name for p in target.parent.iterdir()] == ["model-v1"]


def test_a_failed_folder_write_leaves_no_folder(tmp_path: Path) -> None:
    target = tmp_path / "cache" / "model-v1"
    with pytest.raises(RuntimeError), atomic_dir(target, keep_existing=True) as tmp:
        (tmp / "weights").write_text("half")
        raise RuntimeError("crash mid-write")
    assert list(target.parent.iterdir()) == []


def test_a_failed_folder_write_is_removed_while_a_straggling_writer_still_adds_files(tmp_path: Path) -> None:
    # MLflow's download threads keep copying files after its listing has failed in the caller:
    # the cleanup races them, and a file landing mid-rmtree made it raise ENOTEMPTY and stay.
    target = tmp_path / "cache" / "model-v1"
    started = threading.Event()

    def straggle(folder: Path, name: str) -> None:
        deadline = time.monotonic() + 0.5
        index = 0
        while time.monotonic() < deadline:
            try:
                (folder / f"{name}-{index}").write_bytes(b"x" * 64)
            except FileNotFoundError:
                return  # the folder is gone: a copy into it fails, as MLflow's does
            index += 1
            if index == 200:
                started.set()
        started.set()

    with pytest.raises(RuntimeError, match="listing failed"), atomic_dir(target, keep_existing=True) as tmp:
        writers = [threading.Thread(target=straggle, args=(tmp, f"part{n}")) for n in range(4)]
        for writer in writers:
            writer.start()
        started.wait()
        raise RuntimeError("listing failed")
    for writer in writers:
        writer.join()
    assert list(target.parent.iterdir()) == []
