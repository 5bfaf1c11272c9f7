"""Tune the path search (params.yaml `extract:`) on validation logs, never on the test split or the foreign set.

    python benchmarks/extract.py [--model MODEL_DIR] [--profile NAME] [--split val] [--max-logs 30] [--workers 2]
                                 [--knobs share_weight,absent_cost] [--passes 2]

The net's class probabilities are computed once per log; then the path search
(`reading/extract.py`) reads every curve the log's sidecar names again under each candidate
setting, and every reading is scored as the evaluate stage scores it (`evaluate.score_curves`:
the band a curve sweeps over each column, the best assignment of curves drawn alike, the K-curve
swap share). The search is coordinate descent: starting from the profile's `extract:` values,
each knob in turn tries the values of `GRID` with the others held, and keeps the best; two passes
over the knobs. `--knobs` limits the search to some knobs and `--passes` sets the passes, so a new
model can be re-tuned on the knobs in question at a fraction of the full grid's trials (one pass
over `share_weight` alone: 6 trials against about 48).

Objective: the gate's figure, the lowest per-style median R^2 over the logs' curves; ties go to the
lower mean of the per-style median MAE. R^2 and MAE count only the columns a curve is read in, so
a setting that reads less could score better by leaving hard stretches unread: a setting only
competes if each style's median coverage stays within `COVERAGE_SLACK` of the starting setting's.
Tuning on `val` (wells that are neither trained nor tested on) keeps the test split's figures
honest: copy the winning values into params.yaml `extract:` and the next `veernet evaluate`
measures them on `test`. The foreign renderer's set is refused outright: it measures how the
model generalises, so nothing may be fitted to it.

The best setting is also scored on the logs' true masks used as class probabilities: what the
path search would read from a perfect net. That column is the ceiling the net is measured against;
the gap between it and the best setting is the net's, not the path search's. Two mixtures split that
gap (`source_probs`): the net's own curve ink with the true style named on every true curve pixel
(what naming styles costs the net), and the true ink with the styles spread as the net spreads them
(what finding ink costs it).

Writes `results/extract.json` (every setting tried, with its figures) and `results/extract.md`
(the starting and the best setting, knob by knob, the ceiling and the two mixtures) beside this
script, and prints the table.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import multiprocessing
import signal
from collections.abc import Iterator, Sequence
from multiprocessing.pool import Pool
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import tifffile
import torch

from veernet_pipeline.config import ExtractParams, load_settings
from veernet_pipeline.evaluation.evaluate import score_curves, select_logs
from veernet_pipeline.evaluation.truth import truth_tracks
from veernet_pipeline.io.atomic import write_json_atomic, write_text_atomic
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.io.tiff import decode_scan
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.progress import progress
from veernet_pipeline.reading.candidates import STYLE_CLASSES
from veernet_pipeline.reading.extract import trace_curves
from veernet_pipeline.reading.predict import predict_probs
from veernet_pipeline.reading.styles import as_style_probs, curve_classes, style_labels

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
# Values each knob tries (the profile's own value is always tried too).
GRID: dict[str, list[float]] = {
    "jump_px": [2.0, 4.0, 8.0, 16.0, 32.0, 64.0],
    "share_weight": [0.25, 0.5, 1.0, 2.0, 4.0, 8.0],
    "absent_cost": [0.75, 1.5, 3.0, 6.0],
    "gap_cost": [1.0, 2.0, 4.0, 8.0, 16.0],
    "crossing_cost": [0.0, 1.0, 2.0, 4.0],
    "min_confidence": [0.2, 0.3, 0.5],
    "max_candidates": [4, 6, 8],
    "height_weight_styles": [0.0, 0.1, 0.25, 0.5],
}
PASSES = 2
# What the curves are read from: the net, the true masks (the ceiling), and two mixtures (`source_probs`).
SOURCES = ("net", "mask", "net_ink", "true_ink")
EPS = 1e-6
COVERAGE_SLACK = 0.005


def load_logs(model_dir: Path, set_dir: Path, split: str, max_logs: int, tile_width: int, tile_overlap: int,
              mirror: bool = False) -> list[dict[str, Any]]:
    """Class probabilities (`mirror`: test-time mirroring), true mask, truth and curve classes of every log, once."""
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = load_model(model_dir, map_location=device)
    logs = []
    for row in progress(select_logs(set_dir, split, max_logs).itertuples(index=False), desc="predict", unit="log"):
        image = decode_scan(set_dir / row.image)
        height, width = image.shape
        calibration = Calibration.from_file(set_dir / row.calibration)
        n_truth = min(int(row.n_curves), len(calibration.curves))
        styles = [c.style for c in calibration.curves]
        logs.append({"id": row.id, "height": height, "mask": tifffile.imread(set_dir / row.mask),
                     "probs": predict_probs(model, image, tile_width, tile_overlap, device, mirror=mirror),
                     "truth": truth_tracks(set_dir / row.las, calibration, width, n_truth, height),
                     "classes": curve_classes(styles)[:n_truth], "styles": style_labels(styles)[:n_truth]})
    return logs


def mask_probs(mask: np.ndarray, num_classes: int) -> np.ndarray:
    """A true mask as near-certain class probabilities (0.98 on the labelled class).

    Shape:
        mask: (H, W) class ids. Returns (num_classes, H, W) float32.
    """
    one_hot = np.stack([(mask == k) for k in range(num_classes)]).astype(np.float32)
    return 0.98 * one_hot + 0.02 / num_classes


def source_probs(item: dict[str, Any], source: str) -> np.ndarray:
    """The class probabilities a log's curves are read from under `source` (one of `SOURCES`).

    "net_ink": the net's curve ink (its summed probability of the five curve styles) put on the true
    style wherever the true mask has a curve pixel, left as the net spread it elsewhere: what the
    reading would give if the net named every style it finds right. "true_ink": the true mask, but each
    true curve pixel's 0.98 spread over the styles as the net spreads that pixel's curve ink: what it
    would give if the net found all the ink and only named styles as it does (evenly where it sees no
    curve ink). The mixtures need a map on the style classes (`io.classes`).

    Shape:
        Returns (C, H, W) float32.
    """
    net = np.asarray(item["probs"], dtype=np.float32)
    if source == "net":
        return net
    mask, curve = item["mask"], slice(STYLE_CLASSES[0], STYLE_CLASSES[-1] + 1)
    if source == "mask":
        return mask_probs(mask, net.shape[0])
    if net.shape[0] != NUM_CLASSES:
        raise ValueError(f"source {source!r} mixes the net's style classes with the truth's; a map of "
                         f"{net.shape[0]} channels has none (use a {NUM_CLASSES}-class multiclass model)")
    on_curve = mask >= STYLE_CLASSES[0]
    ink = net[curve].sum(axis=0)
    if source == "net_ink":
        out = net.copy()
        out[curve][:, on_curve] = 0.0
        for c in STYLE_CLASSES:
            out[c][mask == c] = ink[mask == c]
        return out
    if source == "true_ink":
        true = mask_probs(mask, net.shape[0])
        # Where the net sees no curve ink at all it has no style to spread: evenly then.
        share = (net[curve][:, on_curve] + EPS) / (ink[on_curve] + len(STYLE_CLASSES) * EPS)
        true[curve][:, on_curve] = (true[curve][:, on_curve].sum(axis=0) * share).astype(np.float32)
        return true
    raise ValueError(f"source {source!r} is not one of {SOURCES}")


@contextlib.contextmanager
def readers(logs: list[dict[str, Any]], workers: int) -> Iterator[Pool | None]:
    """One pool of `workers` forked processes that read `logs` for every trial of a search; None for one process.

    Forked once, not per trial: a search scores 48 or so settings. The children see the logs the
    parent held at the fork without pickling them, so `score` must be given the same `logs`.
    """
    if workers <= 1:
        yield None
        return
    global _FORKED_LOGS
    _FORKED_LOGS = logs
    try:
        with _forked_pool(workers) as pool:
            yield pool
    finally:
        _FORKED_LOGS = []


def _forked_pool(workers: int) -> Pool:
    """A pool of `workers` children forked with SIGTERM's default action, so its `terminate()` ends every one.

    A forked child inherits its parent's Python-level handlers, and Dagster leaves one for SIGTERM in any
    process that executed a run in-process (`dagster._utils.interrupts` maps it to SIGINT's; inside
    `capture_interrupts` it only records the signal). A child busy or blocked there never dies of it, and
    `terminate()` then waits on it for ever: a CI test worker hung so for 900 s on 2026-11-28 (a busy child),
    and again on 2026-12-07 (a child that never reached the pool's initializer, so it had to be born with the
    default action: the parent holds it only while the pool forks). The initializer still sets it in a worker the
    pool forks later, from its own thread, in place of one that died.
    """
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        return multiprocessing.get_context("fork").Pool(workers, initializer=_default_sigterm)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _default_sigterm() -> None:
    """Give a worker forked after its pool started SIGTERM's default action (`_forked_pool`)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def score(logs: list[dict[str, Any]], params: ExtractParams, source: str = "net", pool: Pool | None = None
          ) -> dict[str, float]:
    """Per-style median R^2, MAE and coverage over the logs' curves, mean swap share, and the objective.

    `source` says what the curves are read from (`SOURCES`): the net's probabilities, the true
    masks, or one of the two mixtures that split the net's loss into finding ink and naming its style.
    With a `pool` from `readers(logs, ...)` each log is read in one of its processes (the figures do
    not depend on it: the results come back in log order).
    """
    if pool is not None:
        if logs is not _FORKED_LOGS:
            raise ValueError("the pool's workers hold other logs: score the logs the pool was made with (readers)")
        parts = pool.map(_read_forked, [(i, params, source) for i in range(len(logs))], chunksize=1)
        records = [r for part in parts for r in part[0]]
        swaps = [s for part in parts for s in part[1]]
    else:
        records, swaps = read_logs(logs, params, source)
    medians = pd.DataFrame(records).groupby("style")[["r2", "mae", "coverage"]].median()
    out: dict[str, float] = {}
    for style, figures in medians.iterrows():
        out.update({f"median_{metric}_{style}": float(figures[metric]) for metric in ("r2", "mae", "coverage")})
    out["swap_share"] = _nanmean(swaps)
    r2s = medians["r2"].to_numpy(dtype=np.float64)
    out["objective"] = float(r2s.min()) if np.isfinite(r2s).all() else -math.inf
    out["mean_mae"] = float(medians["mae"].mean())
    return out


def read_logs(logs: Sequence[dict[str, Any]], params: ExtractParams, source: str = "net"
              ) -> tuple[list[dict[str, Any]], list[float]]:
    """Every curve of the logs read under `params` from `source` and scored as evaluate scores it; each log's swaps."""
    records, swaps = [], []
    for item in logs:
        probs = source_probs(item, source)
        rows, _ = trace_curves(as_style_probs(probs), params, item["classes"])
        scores, swap, _ = score_curves(rows, item["truth"], item["classes"], item["height"])
        records += [{"style": style, **s} for style, s in zip(item["styles"], scores, strict=True)]
        swaps.append(swap)
    return records, swaps


_FORKED_LOGS: list[dict[str, Any]] = []


def _read_forked(task: tuple[int, ExtractParams, str]) -> tuple[list[dict[str, Any]], list[float]]:
    """`read_logs` of one of the logs `readers` forked its workers with."""
    index, params, source = task
    return read_logs([_FORKED_LOGS[index]], params, source)


def better(a: dict[str, float], b: dict[str, float], floor: dict[str, float]) -> bool:
    """Whether figures `a` beat `b`: every style's coverage at `floor` or above, higher objective, lower mean MAE."""
    if any(not a.get(key, math.nan) >= floor[key] for key in floor):  # a NaN coverage fails too
        return False
    return (a["objective"], -a["mean_mae"]) > (b["objective"], -b["mean_mae"])


def check_knobs(knobs: Sequence[str]) -> None:
    """Raise ValueError naming any knob `GRID` does not search."""
    unknown = sorted(set(knobs) - set(GRID))
    if unknown:
        raise ValueError(f"knobs {unknown} are not searched; choose from {','.join(GRID)}")


def search(logs: list[dict[str, Any]], start: ExtractParams, pool: Pool | None = None,
           knobs: Sequence[str] = tuple(GRID), passes: int = PASSES) -> tuple[ExtractParams, list[dict[str, Any]]]:
    """Coordinate descent over `GRID` from `start`; returns the best params and every trial (`pool` as for `score`).

    Args:
        knobs: the knobs searched, in `GRID` order whatever order they are given in; the others keep `start`'s values.
        passes: sweeps over the knobs.

    Raises:
        ValueError: a knob `GRID` does not hold.
    """
    check_knobs(knobs)
    best, best_figures = start, score(logs, start, pool=pool)
    trials = [{"params": start.model_dump(), **best_figures}]
    floor = {key: value - COVERAGE_SLACK for key, value in best_figures.items() if key.startswith("median_coverage_")}
    log.info("start: %s", best_figures)
    for _ in range(passes):
        for knob in (knob for knob in GRID if knob in knobs):
            for value in GRID[knob]:
                if getattr(best, knob) == value:
                    continue
                candidate = best.model_copy(update={knob: type(getattr(best, knob))(value)})
                figures = score(logs, candidate, pool=pool)
                trials.append({"params": candidate.model_dump(), **figures})
                if better(figures, best_figures, floor):
                    best, best_figures = candidate, figures
                    log.info("%s = %s: objective %.4f, mean MAE %.4f", knob, value, figures["objective"],
                             figures["mean_mae"])
    return best, trials


def markdown(start: dict[str, Any], best: dict[str, Any], sources: dict[str, dict[str, float]], n_logs: int,
             split: str, model_dir: Path) -> str:
    """The starting and the best setting side by side, then the best setting read from the other `SOURCES`."""
    lines = ["| | start | best | best, net's ink on the true styles | best, true ink with the net's styles "
             "| best, read from the true masks |", "|---|---:|---:|---:|---:|---:|"]
    columns = [sources["net_ink"], sources["true_ink"], sources["mask"]]
    for knob in GRID:
        lines.append(f"| `{knob}` | {start['params'][knob]} | " + " | ".join([str(best["params"][knob])] * 4) + " |")
    figures = sorted(key for key in best if key.startswith("median_")) + ["swap_share", "objective"]
    for key in figures:
        cells = [start.get(key, math.nan), best[key], *(column.get(key, math.nan) for column in columns)]
        lines.append(f"| {key} | " + " | ".join(f"{cell:.4f}" for cell in cells) + " |")
    return (f"# Path-search tuning\n\n{n_logs} logs of split `{split}`, model `{model_dir.name}`; objective: "
            f"the lowest per-style median R^2 (the gate's figure). The last column reads the true masks instead of "
            f"the net's probabilities: the ceiling a perfect net would reach under the best setting. The two before "
            f"it split the net's loss: its own curve ink with every true curve pixel's style named right, and the "
            f"true ink with each curve pixel's style spread as the net spreads it (`source_probs`).\n\n"
            + "\n".join(lines) + "\n")


def _nanmean(values: list[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return float(np.mean(finite)) if finite else math.nan


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Parse arguments, tune, write the JSON and the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, help="multiclass model folder (default: paths.models/multiclass)")
    parser.add_argument("--set-dir", type=Path, help="synthetic set (default: paths.synthetic/multiclass)")
    parser.add_argument("--params", type=Path, help="params.yaml (default: $VEERNET_PARAMS or the nearest one)")
    parser.add_argument("--profile", help="params.yaml profile (default: the file's `profile:`)")
    parser.add_argument("--split", default="val", help="split to tune on (default: val; never tune on test)")
    # 30 rather than 16: the objective is a per-style median, and 16 logs left the rarer styles few curves.
    parser.add_argument("--max-logs", type=int, default=30, help="logs of the split to use (0 = all)")
    parser.add_argument("--workers", type=int, default=1,
                        help="processes reading the logs, forked once for the search (the figures do not depend on it)")
    parser.add_argument("--knobs", type=lambda text: text.split(","), default=list(GRID),
                        help=f"comma-separated knobs to search (default: all of {','.join(GRID)})")
    parser.add_argument("--passes", type=int, default=PASSES, help=f"sweeps over the knobs (default: {PASSES})")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="folder for extract.json / extract.md")
    args = parser.parse_args(argv)
    try:
        check_knobs(args.knobs)  # before minutes of prediction, not after
    except ValueError as error:
        parser.error(str(error))
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    settings = load_settings(args.params, args.profile)
    model_dir = (args.model or settings.path("models") / "multiclass").resolve()
    set_dir = (args.set_dir or settings.path("synthetic") / "multiclass").resolve()
    if args.split == settings.evaluate.split:
        parser.error(f"split {args.split!r} is the one evaluate reports on (evaluate.split); tune on val")
    if settings.evaluate.foreign and set_dir == (settings.path("synthetic") / settings.evaluate.foreign).resolve():
        parser.error(f"{set_dir} is the foreign renderer's set (evaluate.foreign): it measures generalisation and is "
                     "never tuned on; tune on the val split of paths.synthetic/multiclass")
    # Mirroring decides how the probabilities are made, so it is fixed from the profile, not searched.
    logs = load_logs(model_dir, set_dir, args.split, args.max_logs, settings.evaluate.tile_width,
                     settings.evaluate.tile_overlap, settings.extract.mirror)
    with readers(logs, args.workers) as pool:
        best, trials = search(logs, settings.extract, pool, args.knobs, args.passes)
        sources = {source: score(logs, best, source=source, pool=pool) for source in SOURCES[1:]}
    best_trial = next(t for t in trials if t["params"] == best.model_dump())
    log.info("best setting on the true masks: %s", sources["mask"])
    document = {"model": str(model_dir), "set": str(set_dir), "split": args.split, "n_logs": len(logs),
                "profile": settings.profile, "knobs": [knob for knob in GRID if knob in args.knobs],
                "passes": args.passes, "start": trials[0], "best": best_trial, "ceiling": sources["mask"],
                "net_ink": sources["net_ink"], "true_ink": sources["true_ink"], "trials": trials}
    args.out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(args.out / "extract.json", document)
    table = markdown(trials[0], best_trial, sources, len(logs), args.split, model_dir)
    write_text_atomic(args.out / "extract.md", table)
    print(table)
    return document


if __name__ == "__main__":
    main()
