"""Ingest never stops (hostile files, a worker killed mid-file, a hang, a memory blow-up); it reads only what changed.

Every test here runs the real worker pool (spawned processes) on real files.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
import tifffile

from benchmarks.hostile import hostile_corpus
from tests.worker_probe import address_space_limit, heavy_modules
from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.io.ingest import ingest_archive, read_manifest
from veernet_pipeline.io.pool import worker_pool
from veernet_pipeline.io.tiff import write_tiff
from veernet_pipeline.validation.validate import validate_manifest

REPO = Path(__file__).parents[2]
# Work that keeps a worker busy for about 2 s and over 150 MB: 12,000 x 12,000 px of noise to decode,
# measure and compress (zlib cannot shrink noise, so writing the decoded copy is slow).
SLOW_SIDE = 12_000


def _settings(*overrides: str) -> Settings:
    return load_settings(REPO / "params.yaml", profile="test", overrides=list(overrides))


def _strip(seed: int, height: int = 100, width: int = 400) -> np.ndarray:
    rng = np.random.default_rng(seed)
    image = np.full((height, width), 250, np.uint8)
    image[np.clip(np.cumsum(rng.integers(-1, 2, width)) + height // 2, 0, height - 1), np.arange(width)] = 0
    return image


def _good_files(raw: Path, n: int) -> list[str]:
    raw.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        write_tiff(raw / f"good_{i}.tif", _strip(i), compression="lzw")
    return [f"good_{i}.tif" for i in range(n)]


def test_hostile_corpus_gets_one_row_per_file(tmp_path: Path) -> None:
    # Bounds opened so that every file a header lets through is decoded, not set aside by its size.
    settings = _settings("validate.width.min=1", "validate.height.min=1", "validate.height.max=100000")
    kinds = hostile_corpus(tmp_path / "raw", seed=settings.seed, n_fuzz=75)
    good = _good_files(tmp_path / "raw", 3)
    counts = ingest_archive(tmp_path / "raw", tmp_path / "ingested", settings.ingest, settings.validate_)
    assert counts["files"] == len(kinds) + len(good) == 3 + 26 + 75
    manifest, _ = read_manifest(tmp_path / "ingested")
    assert sorted(manifest["path"]) == sorted([*kinds, *good])
    codes = manifest.set_index("path")["error_code"]
    for name in good:
        assert codes[name] == "", name
    expected = {"empty": "unreadable", "text": "unreadable", "png": "unreadable", "pdf": "unreadable",
                "jpeg": "unreadable", "random_bytes": "unreadable", "magic_only": "truncated",
                "truncated_05": "truncated", "truncated_60": "truncated", "strip_offset_past_end": "truncated",
                "fewer_byte_counts": "unreadable", "unknown_compression": "unsupported", "bomb_deflate": "too_large",
                "bomb_g4": "too_large", "palette_without_colormap": "unreadable"}
    for kind, code in expected.items():
        assert codes[f"crafted_{kind}.tif"] == code, kind
    # Every failure names its file; none is a fault of ingest itself.
    failed = manifest[manifest["error_code"] != ""]
    assert all(m.startswith(f"{p}: ") for p, m in zip(failed["path"], failed["error_message"], strict=True))
    assert "ingest_error" not in set(failed["error_code"])
    fuzz = Counter(codes[[n for n, k in kinds.items() if k == "fuzz"]])
    assert sum(fuzz.values()) == 75 and len(fuzz) >= 3  # fuzzing yields decodable files and several failures
    validated = validate_manifest(tmp_path / "ingested", tmp_path / "validated", settings.validate_)
    assert validated["files"] == validated["validated"] + validated["quarantined"] == counts["files"]


def _slow_archive(raw: Path) -> list[str]:
    """Three small scans and, first in order, one that keeps its worker busy (`SLOW_SIDE`)."""
    good = _good_files(raw, 3)
    noise = np.random.default_rng(0).integers(0, 256, (200, SLOW_SIDE * SLOW_SIDE // 200), dtype=np.uint8)
    tifffile.imwrite(raw / "a_slow.tif", noise)  # 200 px high: within the test profile's bounds
    return good


def test_a_file_over_the_time_limit_is_decode_timeout(tmp_path: Path) -> None:
    settings = _settings("ingest.timeout_s=0.5")
    good = _slow_archive(tmp_path / "raw")
    counts = ingest_archive(tmp_path / "raw", tmp_path / "ingested", settings.ingest, settings.validate_)
    manifest = read_manifest(tmp_path / "ingested")[0].set_index("path")
    assert counts["files"] == 4 and counts["decoded"] == 3
    assert manifest.loc["a_slow.tif", "error_code"] == "decode_timeout"
    assert "longer than 0.5 s (ingest.timeout_s)" in manifest.loc["a_slow.tif", "error_message"]
    assert all(manifest.loc[name, "decoded"] for name in good)


def _kill_the_busy_worker(stop: threading.Event, killed: list[int]) -> None:
    """SIGKILL every worker process of this test that holds over 150 MB: the one decoding the slow file, each time.

    Each time, because a codec crash recurs: were the pool to lose track of which file its worker held (the
    window pebble cannot attribute, which load opens), the file is read again alone and must crash again.
    """
    me = psutil.Process()
    while not stop.is_set():
        for child in me.children(recursive=True):
            try:
                if child.memory_info().rss > 150 * 2**20:
                    os.kill(child.pid, signal.SIGKILL)
                    killed.append(child.pid)
                    break
            except psutil.NoSuchProcess:
                continue
        time.sleep(0.02)


def test_a_worker_killed_mid_file_costs_only_that_file(tmp_path: Path) -> None:
    settings = _settings("ingest.workers=1")
    good = _slow_archive(tmp_path / "raw")
    stop, killed = threading.Event(), []
    watcher = threading.Thread(target=_kill_the_busy_worker, args=(stop, killed))
    watcher.start()
    try:
        counts = ingest_archive(tmp_path / "raw", tmp_path / "ingested", settings.ingest, settings.validate_)
    finally:
        stop.set()
        watcher.join()
    assert killed
    manifest = read_manifest(tmp_path / "ingested")[0].set_index("path")
    assert counts["files"] == 4 and counts["decoded"] == 3
    assert manifest.loc["a_slow.tif", "error_code"] == "decode_crashed"
    # "(killed by signal SIGKILL)" when pebble saw which file the worker held; "before it could report" when not.
    assert "the worker process died during the decode" in manifest.loc["a_slow.tif", "error_message"]
    assert all(manifest.loc[name, "decoded"] for name in good)  # the pool started a new worker for them


def test_a_decode_past_the_memory_limit_fails_alone(tmp_path: Path) -> None:
    # The pixel budget raised past the bomb, so the worker's address-space limit is what stops it.
    settings = _settings("ingest.max_pixels=1000000000000", "ingest.worker_memory_mb=512",
                         "validate.width.min=1", "validate.height.max=100000")
    kinds = hostile_corpus(tmp_path / "corpus", seed=0, n_fuzz=0)
    good = _good_files(tmp_path / "raw", 2)
    assert kinds["crafted_bomb_g4.tif"] == "bomb_g4"  # 100,000 x 100,000 px of 1-bit G4 in 280 bytes
    (tmp_path / "raw" / "bomb.tif").write_bytes((tmp_path / "corpus" / "crafted_bomb_g4.tif").read_bytes())
    counts = ingest_archive(tmp_path / "raw", tmp_path / "ingested", settings.ingest, settings.validate_)
    manifest = read_manifest(tmp_path / "ingested")[0].set_index("path")
    assert counts == {"files": 3, "pages": 0, "strips": 0, "rows": 3, "decoded": 2, "resampled": 0, "errors": 1,
                      "read": 3, "reused": 0}
    assert manifest.loc["bomb.tif", "error_code"] == "too_large"
    assert "needs more memory than this process may use" in manifest.loc["bomb.tif", "error_message"]
    assert all(manifest.loc[name, "decoded"] for name in good)


def test_second_ingest_reads_only_what_changed(tmp_path: Path) -> None:
    settings = _settings()
    raw, out = tmp_path / "raw", tmp_path / "ingested"
    _good_files(raw, 4)
    first = ingest_archive(raw, out, settings.ingest, settings.validate_)
    assert (first["read"], first["decoded"]) == (4, 4)
    manifest_bytes = (out / "manifest.parquet").read_bytes()
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "scans").iterdir()}

    again = ingest_archive(raw, out, settings.ingest, settings.validate_)
    assert (again["read"], again["reused"]) == (0, 4)
    assert {p.name: p.stat().st_mtime_ns for p in (out / "scans").iterdir()} == stamps
    assert (out / "manifest.parquet").read_bytes() == manifest_bytes

    # Touched, same bytes: hashed again (its mtime changed) but not decoded again; the manifest is unchanged.
    os.utime(raw / "good_1.tif", ns=(time.time_ns(), time.time_ns() + 10**9))
    touched = ingest_archive(raw, out, settings.ingest, settings.validate_)
    assert touched["read"] == 1
    assert {p.name: p.stat().st_mtime_ns for p in (out / "scans").iterdir()} == stamps
    assert (out / "manifest.parquet").read_bytes() == manifest_bytes

    # New bytes: read and decoded again, to a new decoded copy.
    before = read_manifest(out)[0].set_index("path")
    write_tiff(raw / "good_2.tif", _strip(99), compression="zlib")
    changed = ingest_archive(raw, out, settings.ingest, settings.validate_)
    after = read_manifest(out)[0].set_index("path")
    assert changed["read"] == 1
    assert after.loc["good_2.tif", "sha256"] != before.loc["good_2.tif", "sha256"]
    assert after.loc["good_2.tif", "compression"] == "adobe_deflate"
    assert (out / after.loc["good_2.tif", "decoded"]).stat().st_mtime_ns not in stamps.values()
    pd.testing.assert_frame_equal(after.drop(index="good_2.tif"), before.drop(index="good_2.tif"))

    # Other rules (the pixel budget) make every remembered row stale.
    tighter = _settings("ingest.max_pixels=1000")
    assert ingest_archive(raw, out, tighter.ingest, tighter.validate_)["read"] == 4


def test_workers_do_not_import_torch_and_are_capped() -> None:
    with worker_pool(1, 512) as pool:
        assert pool.schedule(heavy_modules).result(timeout=60) == []
        assert pool.schedule(address_space_limit).result(timeout=60) == 512 * 2**20


def test_ingest_runs_with_one_worker_per_core(tmp_path: Path) -> None:
    settings = _settings("ingest.workers=0")
    _good_files(tmp_path / "raw", 2)
    assert ingest_archive(tmp_path / "raw", tmp_path / "ing", settings.ingest, settings.validate_)["decoded"] == 2

