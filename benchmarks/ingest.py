"""Ingest's speed and robustness: header scan rate, decode cost per codec, a hostile corpus, the pool's overhead.

    python benchmarks/ingest.py [--files 2000] [--fuzz 400] [--workers 2]

1. Header scan: the header step of ingest (hash, tags, pixel budget, rules; `io.scanfile.header_step`)
   over `--files` mixed small TIFFs (13 flavours: LZW, Deflate, PackBits, raw, JPEG, tiled, BigTIFF,
   MINISWHITE, 16-bit, RGB JPEG, 1-bit, CCITT G3, G4), in the worker pool with 1 and `--workers`
   processes. Files per second, steady (after the workers' start-up) and with start-up. Goal: >= 1,000/s on 2.
2. Decode cost per codec: `tiff.decode_scan` of one full-size strip (640 x 12,800 px) per codec,
   against reading the same file's bytes; the ratio is decode time / raw read time (median of 5).
3. Hostile corpus: `hostile.hostile_corpus` (every crafted kind, `--fuzz` fuzzed TIFFs, seeded
   from params.yaml's seed) plus its valid flavours, through `ingest_archive` with `--workers`:
   files in vs rows out, escaped exceptions (goal 0), rows by code, peak RSS of this process and of
   the workers (goal < 1 GiB).
4. Pool overhead: a task that does nothing, through `io.pool.run_each`, per task.

Writes results/ingest.{json,md}.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import tifffile
from _record import load_note, machine, markdown_table, median_seconds, write_results
from hostile import _valid_flavours, hostile_corpus
from PIL import Image

from veernet_pipeline.config import load_settings
from veernet_pipeline.io.ingest import ingest_archive, read_manifest, read_rules
from veernet_pipeline.io.pool import run_each, worker_pool
from veernet_pipeline.io.scanfile import header_step
from veernet_pipeline.io.tiff import decode_scan

RESULTS = Path(__file__).resolve().parent / "results"
REPO = Path(__file__).resolve().parents[1]


def nothing(index: int) -> dict[str, Any]:
    """The pool-overhead task."""
    return {"index": index}


def _strip(height: int = 640, width: int = 12_800) -> np.ndarray:
    """A full-size strip: paper, a grid every 10 columns, a wandering one-pixel curve."""
    rng = np.random.default_rng(0)
    image = np.full((height, width), 240, np.uint8)
    image[:, ::10] = 200
    image[::64, :] = 180
    rows = np.clip(np.cumsum(rng.integers(-2, 3, width)) + height // 2, 0, height - 1)
    image[rows, np.arange(width)] = 10
    return image


def header_scan(folder: Path, n_files: int, workers: int) -> dict[str, Any]:
    flavours = _valid_flavours(np.random.default_rng(1))
    folder.mkdir(parents=True)
    for i in range(n_files):
        (folder / f"scan_{i:05d}.tif").write_bytes(flavours[i % len(flavours)])
    settings = load_settings(REPO / "params.yaml", profile="test")
    rules = read_rules(settings.ingest, settings.validate_)
    jobs = [(p.name, (str(p), p.name, rules)) for p in sorted(folder.iterdir())]
    rows = []
    for count in sorted({1, workers}):
        started = time.perf_counter()
        with worker_pool(count, settings.ingest.worker_memory_mb) as pool:
            run_each(pool, header_step, jobs[:count * 4], 60.0, "warm-up")  # workers started and importing done
            warm = time.perf_counter()
            found = run_each(pool, header_step, jobs, 60.0, "header")
            done = time.perf_counter()
        failed = sum(1 for f in found.values() if f.get("error_code"))
        rows.append({"workers": count, "files": len(jobs), "steady_files_per_s": len(jobs) / (done - warm),
                     "files_per_s_with_startup": len(jobs) / (done - started), "failed": failed})
    base = rows[0]["steady_files_per_s"]
    for row in rows:
        row["vs_one_worker"] = row["steady_files_per_s"] / base
    return {"flavours": len(flavours), "mean_file_bytes": int(np.mean([len(f) for f in flavours])), "runs": rows}


def _codec_files(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True)
    strip = _strip()
    rgb = np.stack([strip, strip, (strip * 0.9).astype(np.uint8)], axis=-1)
    files: dict[str, Path] = {}
    for name, array, kwargs in (
        ("none", strip, {}), ("lzw", strip, {"compression": "lzw"}), ("deflate", strip, {"compression": "zlib"}),
        ("packbits", strip, {"compression": "packbits"}), ("zstd", strip, {"compression": "zstd"}),
        ("jpeg_gray", strip, {"compression": "jpeg"}),
        ("jpeg_ycbcr", rgb, {"compression": "jpeg", "photometric": "rgb"}),
        ("lzw_tiled", strip, {"compression": "lzw", "tile": (256, 256)}),
        ("deflate_16bit", strip.astype(np.uint16) * 257, {"compression": "zlib"}),
        ("packbits_1bit", strip < 128, {"compression": "packbits"}),
    ):
        files[name] = folder / f"{name}.tif"
        tifffile.imwrite(files[name], array, metadata=None, **kwargs)
    for name in ("group3", "group4"):
        files[f"ccitt_{name}"] = folder / f"{name}.tif"
        Image.fromarray(strip >= 128).save(files[f"ccitt_{name}"], compression=name)
    return files


def decode_costs(folder: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for codec, path in _codec_files(folder).items():
        raw_s = median_seconds(lambda p=path: io.BytesIO(p.read_bytes()), 5, warm_up=False)
        decode_s = median_seconds(lambda p=path: decode_scan(p), 5, warm_up=False)
        pixels = 640 * 12_800
        rows.append({"codec": codec, "file_kb": path.stat().st_size // 1024, "raw_read_ms": raw_s * 1000,
                     "decode_ms": decode_s * 1000, "ratio_to_raw_read": decode_s / raw_s,
                     "decoded_mpx_per_s": pixels / decode_s / 1e6})
    for row in rows:  # against decoding the same strip stored uncompressed (the first row)
        row["ratio_to_uncompressed_decode"] = row["decode_ms"] / rows[0]["decode_ms"]
    return rows


def hostile_run(folder: Path, n_fuzz: int, workers: int) -> dict[str, Any]:
    settings = load_settings(REPO / "params.yaml", profile="demo",
                             overrides=[f"ingest.workers={workers}", "validate.width.min=1", "validate.height.min=1",
                                        "validate.height.max=100000"])
    raw = folder / "raw"
    kinds = hostile_corpus(raw, seed=settings.seed, n_fuzz=n_fuzz)
    for i, data in enumerate(_valid_flavours(np.random.default_rng(settings.seed))):
        (raw / f"valid_{i:02d}.tif").write_bytes(data)
        kinds[f"valid_{i:02d}.tif"] = "valid"
    escaped: list[str] = []
    started = time.perf_counter()
    try:
        counts = ingest_archive(raw, folder / "ingested", settings.ingest, settings.validate_)
    except Exception as exc:  # noqa: BLE001 - the figure this benchmark exists for
        escaped.append(f"{type(exc).__name__}: {exc}")
        counts = {}
    wall = time.perf_counter() - started
    manifest = read_manifest(folder / "ingested")[0] if not escaped else None
    by_code = dict(Counter(manifest["error_code"].replace("", "decoded_or_declined"))) if manifest is not None else {}
    bombs = {} if manifest is None else manifest.set_index("path").loc[
        [n for n, k in kinds.items() if k.startswith("bomb")], "error_code"].to_dict()
    return {"files_in": len(kinds), "rows_out": 0 if manifest is None else len(manifest), "escaped": escaped,
            "wall_s": wall, "counts": counts, "rows_by_code": by_code, "bombs": bombs,
            "kinds": dict(Counter(kinds.values()))}


def pool_overhead(workers: int, n: int = 4000) -> dict[str, Any]:
    with worker_pool(workers, 0) as pool:
        run_each(pool, nothing, [(str(i), (i,)) for i in range(workers * 4)], 60.0, "warm-up")
        started = time.perf_counter()
        run_each(pool, nothing, [(str(i), (i,)) for i in range(n)], 60.0, "noop")
        elapsed = time.perf_counter() - started
    return {"tasks": n, "workers": workers, "ms_per_task": elapsed / n * 1000, "tasks_per_s": n / elapsed}


def _peak_rss_mb() -> dict[str, float]:
    # ru_maxrss is in KiB on Linux; RUSAGE_CHILDREN covers the (joined) worker processes.
    return {"self_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "children_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


def _markdown(doc: dict[str, Any]) -> str:
    head = doc["header_scan"]
    parts = [f"## Header scan ({head['runs'][0]['files']} files, {head['flavours']} flavours, mean "
             f"{head['mean_file_bytes']:,} bytes)\n",
             markdown_table(["workers", "files/s (steady)", "files/s (with start-up)", "vs 1 worker", "failed"],
                            [[str(r["workers"]), f"{r['steady_files_per_s']:,.0f}",
                              f"{r['files_per_s_with_startup']:,.0f}", f"{r['vs_one_worker']:.2f}x",
                              str(r["failed"])] for r in head["runs"]], {1, 2, 3, 4}),
             "\n## Decode cost per codec (one 640 x 12,800 px strip, one core)\n",
             markdown_table(["codec", "file KB", "raw read ms", "decode ms", "decode / raw read",
                             "decode / uncompressed decode", "decoded Mpx/s"],
                            [[r["codec"], f"{r['file_kb']:,}", f"{r['raw_read_ms']:.2f}", f"{r['decode_ms']:.1f}",
                              f"{r['ratio_to_raw_read']:.0f}x", f"{r['ratio_to_uncompressed_decode']:.1f}x",
                              f"{r['decoded_mpx_per_s']:.0f}"]
                             for r in doc["decode"]], {1, 2, 3, 4, 5, 6})]
    hostile = doc["hostile"]
    parts += [f"\n## Hostile corpus ({hostile['files_in']} files: {hostile['kinds']})\n",
              markdown_table(["files in", "rows out", "escaped exceptions", "wall s", "peak RSS self MB",
                              "peak RSS workers MB"],
                             [[str(hostile["files_in"]), str(hostile["rows_out"]), str(len(hostile["escaped"])),
                               f"{hostile['wall_s']:.1f}", f"{doc['peak_rss']['self_mb']:.0f}",
                               f"{doc['peak_rss']['children_mb']:.0f}"]], {0, 1, 2, 3, 4, 5}),
              f"\nRows by code: {hostile['rows_by_code']}. Header bombs: {hostile['bombs']}.\n",
              f"\nPool overhead: {doc['pool']['ms_per_task']:.3f} ms per task "
              f"({doc['pool']['tasks_per_s']:,.0f} tasks/s, {doc['pool']['workers']} workers).\n",
              f"\n{load_note(doc['machine'])}\n"]
    return "".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--fuzz", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    load = os.getloadavg()
    scratch = Path(tempfile.mkdtemp(prefix="veernet-ingest-bench-"))
    try:
        # The hostile corpus first, so that the peak RSS read after it is its own.
        doc: dict[str, Any] = {"hostile": hostile_run(scratch / "hostile", args.fuzz, args.workers)}
        doc["peak_rss"] = _peak_rss_mb()
        doc["header_scan"] = header_scan(scratch / "headers", args.files, args.workers)
        doc["decode"] = decode_costs(scratch / "codecs")
        doc["pool"] = pool_overhead(args.workers)
    finally:
        shutil.rmtree(scratch)
    doc["machine"] = machine(load)
    write_results(RESULTS, "ingest", doc, "Ingest: header scan, decode cost, hostile corpus", _markdown(doc))


if __name__ == "__main__":
    main()
