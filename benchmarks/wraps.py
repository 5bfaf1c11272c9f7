"""Backup scales: which scale each read column of a curve is on, by edge-to-edge steps (the rule before 2026-12-06)
and by the most continuous value (`reading.values.wrap_counts`), on synthetic logs.

    python benchmarks/wraps.py [SET_DIR] [--split val] [--max-logs 80] [--model DIR] [--costs 3e-4,1e-3,3e-3,1e-2]
                               [--profile cpu] [--out DIR]

Every log of the split whose sidecar gives a curve a backup scale is read as the evaluate stage reads it
(`reading.track.read_track`), from its true class mask (a perfect net: what the wrap rule alone costs) and, with
`--model`, from the net's probabilities. Each such curve's read rows are then put on scales by each rule: the edge
steps (a trace that leaves within 0.2 of one edge and is next read within 0.2 of the other has wrapped; the log
starts on the main scale unless another start leaves a quarter more columns on it) and `wrap_counts` at each cost
of `--costs` (the cost of a column one scale off the main one; the library's default is marked).

Scored per curve against the truth's unwrapped position (track fraction + the scale it is drawn on,
`CurveScale.wrap`), over the columns where the truth is shown (not pegged past the last scale) and the curve was
read, in track widths (one scale off is 1.0): the mean absolute error; the share of the columns read at the right
row (within 3 px of the drawn row) but more than 0.1 off in value, i.e. on the wrong scale; and the floor, the
mean with each column on its best scale (what the rows themselves allow). Writes `wraps-<split>.{json,md}`.
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path
from typing import Any

import numpy as np
import tifffile
from _logs import chosen_set
from _record import load_note, machine, markdown_table, write_results
from extract import mask_probs
from tqdm import tqdm

from veernet_pipeline.config import load_settings
from veernet_pipeline.evaluation.evaluate import select_logs
from veernet_pipeline.evaluation.truth import truth_values
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.io.tiff import decode_scan
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.reading.predict import predict_probs
from veernet_pipeline.reading.styles import as_style_probs
from veernet_pipeline.reading.track import read_track
from veernet_pipeline.reading.values import OFF_MAIN_COST, wrap_counts

EDGE = 0.2
START_MARGIN = 0.25
RIGHT_ROW_PX = 3.0
WRONG_SCALE = 0.1


def edge_steps(rows: np.ndarray, height: int, max_wraps: int) -> np.ndarray:
    """The rule before 2026-12-06 (module docstring), as `wrap_counts` then was. Shape: rows (W,) -> (W,) int."""
    wraps = np.zeros(rows.shape, dtype=np.int64)
    fraction = (np.asarray(rows, dtype=np.float64) + 0.5) / height
    seen = np.nonzero(np.isfinite(fraction))[0]
    if max_wraps == 0 or not seen.size:
        return wraps
    before, after = fraction[seen[:-1]], fraction[seen[1:]]
    steps = np.where((before > 1 - EDGE) & (after < EDGE), 1, np.where((before < EDGE) & (after > 1 - EDGE), -1, 0))

    def follow(start: int) -> list[int]:
        counts = [start]
        for step in steps:
            counts.append(min(max(counts[-1] + int(step), -max_wraps), max_wraps))
        return counts

    main = follow(0)
    best = max((follow(s) for s in sorted(range(-max_wraps, max_wraps + 1), key=abs) if s), key=lambda c: c.count(0))
    wraps[seen] = best if best.count(0) >= main.count(0) + START_MARGIN * len(seen) else main
    return wraps


def score_curve(read: np.ndarray, wraps: np.ndarray, drawn: np.ndarray, true_wraps: np.ndarray,
                height: int) -> dict[str, float]:
    """Mean unwrapped error, wrong-scale share at the right row (module docstring). Shape: all (W,)."""
    fraction = (read + 0.5) / height
    shown = (drawn >= 0.0) & (drawn <= 1.0) & np.isfinite(fraction)
    right_row = shown & (np.abs(fraction - drawn) * height <= RIGHT_ROW_PX)
    error = np.abs(fraction + wraps - (drawn + true_wraps))
    return {"mae": float(error[shown].mean()), "wrong_scale": float((error[right_row] > WRONG_SCALE).mean())}


def read_log(set_dir: Path, row: Any, settings: Any, model: Any, costs: list[float]) -> list[dict[str, Any]]:
    """Every backup-scaled curve of one log under each reader and rule."""
    calibration = Calibration.from_file(set_dir / row.calibration)
    n_truth = min(int(row.n_curves), len(calibration.curves))
    if not any(c.backup_wraps for c in calibration.curves[:n_truth]):
        return []
    mask = tifffile.imread(set_dir / row.mask)
    height, width = mask.shape
    values = truth_values(set_dir / row.las, calibration, width, n_truth)
    sources = {"true mask": mask_probs(mask, NUM_CLASSES)}
    if model is not None:
        sources["net"] = as_style_probs(predict_probs(model, decode_scan(set_dir / row.image),
                                                      settings.evaluate.tile_width, settings.evaluate.tile_overlap,
                                                      "cpu", mirror=settings.extract.mirror))
    records = []
    for reader, probs in sources.items():
        rows = read_track(probs, calibration, settings.extract).rows
        for k in range(min(n_truth, rows.shape[0])):
            scale = calibration.curves[k]
            if not scale.backup_wraps:
                continue
            drawn, true_wraps = scale.wrap(scale.value_to_fraction(values[k]))
            track_rows = calibration.image_rows_to_track(rows[k], np.arange(width))
            fraction = (track_rows + 0.5) / height
            record = {"id": row.id, "curve": k, "mnemonic": scale.mnemonic, "reader": reader,
                      "wrapped_share": float((true_wraps != 0).mean()),
                      "floor": score_curve(track_rows, np.round(drawn + true_wraps - fraction), drawn, true_wraps,
                                           height)["mae"],
                      "edge steps": score_curve(track_rows, edge_steps(track_rows, height, scale.backup_wraps),
                                                drawn, true_wraps, height)}
            for cost in costs:
                record[f"continuity {cost:g}"] = score_curve(
                    track_rows, wrap_counts(track_rows, height, scale.backup_wraps, cost), drawn, true_wraps, height)
            records.append(record)
    return records


def table(records: list[dict[str, Any]], rules: list[str]) -> str:
    header = ["Reader", "Rule", "Curves", "Mean abs. error (track widths)", "median",
              "Wrong scale at the right row: mean", "median", "curves > 1 %"]
    out = []
    for reader in dict.fromkeys(r["reader"] for r in records):
        picked = [r for r in records if r["reader"] == reader]
        floor = np.array([r["floor"] for r in picked])
        out.append([reader, "floor (each column on its best scale)", str(len(picked)), f"{floor.mean():.4f}",
                    f"{np.median(floor):.4f}", "", "", ""])
        for rule in rules:
            mae = np.array([r[rule]["mae"] for r in picked])
            wrong = np.array([r[rule]["wrong_scale"] for r in picked])
            label = rule + (" (default)" if rule == f"continuity {OFF_MAIN_COST:g}" else "")
            out.append([reader, label, str(len(picked)), f"{mae.mean():.4f}", f"{np.median(mae):.4f}",
                        f"{np.nanmean(wrong):.4f}", f"{np.nanmedian(wrong):.4f}", str(int((wrong > 0.01).sum()))])
    return markdown_table(header, out, right={2, 3, 4, 5, 6, 7})


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("set_dir", nargs="?", type=Path)
    parser.add_argument("--split", default="val")
    parser.add_argument("--max-logs", type=int, default=80, help="first N logs of the split by id (0 = all)")
    parser.add_argument("--model", type=Path, help="also read the logs with this model's probabilities")
    parser.add_argument("--costs", default="3e-4,1e-3,3e-3,1e-2", help="off-main-scale costs to score")
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    settings = load_settings(Path(__file__).resolve().parents[1] / "params.yaml", args.profile)
    costs = [float(c) for c in args.costs.split(",")]
    set_dir = chosen_set(args, settings)
    model = load_model(args.model, map_location="cpu") if args.model else None
    load_before = os.getloadavg()
    records = []
    for row in tqdm(list(select_logs(set_dir, args.split, args.max_logs).itertuples(index=False)), desc="logs"):
        records += read_log(set_dir, row, settings, model, costs)
    rules = ["edge steps", *(f"continuity {c:g}" for c in costs)]
    record = machine(load_before)
    document = {"set": str(set_dir), "split": args.split, "max_logs": args.max_logs,
                "model": str(args.model) if args.model else None, "costs": costs, "default_cost": OFF_MAIN_COST,
                "curves": records, "machine": record}
    body = (f"Split `{args.split}`, first {args.max_logs or 'all'} logs, curves with a backup scale; profile "
            f"`{args.profile}`.\n\n" + table(records, rules) + f"\n{load_note(record)}\n")
    write_results(args.out, f"wraps-{args.split}", document, "Backup scales: which scale a read column is on", body)
    return document


if __name__ == "__main__":
    main()
