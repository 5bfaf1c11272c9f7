"""Curves drawn alike, some with a backup scale: is each line written under the right mnemonic?

    python benchmarks/alike_wraps.py [SET_DIR] [--split val] [--max-logs 0] [--model DIR] [--profile cpu]
                                     [--name NAME]

Every log of the split with a group of curves drawn alike (one style and pen) that mixes curves with and without a
backup scale is read as the evaluate stage reads it, from its true class mask (a perfect net) and, with `--model`,
by the net (`reading.enlarge.read_scan`). The lines read are then written under the mnemonics two ways: today's rule
(`reading.alike_order.alike_order`: lines that step through an edge go to the curves with a backup scale, then the
higher line first) and the rule before it (the higher line first, `same_class_order`), which differ only in which
line each curve of such a group gets. Each curve of those groups is scored as `veernet digitize` writes it, not as
the evaluate stage scores it (which forgives a group drawn alike any order, `identity.best_assignment`): the mean
distance of its values from the truth's over the columns where the truth is drawn, both in unwrapped track widths
(a value one backup scale off is 1.0 away), and whether it got its own line (the one the best assignment gives it).
Writes `results/<name>.{json,md}`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import numpy as np
import tifffile
from _logs import chosen_set, log_parser
from _record import load_note, machine, markdown_table, write_results
from extract import mask_probs
from tqdm import tqdm

from veernet_pipeline.config import load_settings
from veernet_pipeline.evaluation.evaluate import select_logs
from veernet_pipeline.evaluation.identity import best_assignment
from veernet_pipeline.evaluation.truth import drawn_tracks, truth_band, truth_values
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.io.tiff import decode_colour
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.reading.alike_order import alike_groups, same_class_order
from veernet_pipeline.reading.enlarge import read_scan
from veernet_pipeline.reading.track import read_track
from veernet_pipeline.reading.values import rows_to_values

RULES = ("before", "now")


def mixed_groups(kinds: list[Any], backup: list[bool]) -> list[list[int]]:
    """Groups of curves drawn alike that mix curves with and without a backup scale."""
    return [group for group in alike_groups(kinds) if len({backup[k] for k in group}) > 1]


def value_error(calibration: Calibration, rows: np.ndarray, height: int, k: int, true_values: np.ndarray) -> float:
    """Mean distance of curve k's written values from the truth's, unwrapped track widths, where the truth is drawn."""
    scale = calibration.curves[k]
    read, _ = rows_to_values(calibration, rows, height, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        error = np.abs(scale.value_to_fraction(read) - scale.value_to_fraction(true_values))
    drawn, _ = scale.wrap(scale.value_to_fraction(true_values))
    shown = (drawn >= 0.0) & (drawn <= 1.0) & np.isfinite(error)
    return float(error[shown].mean()) if shown.any() else float("nan")


def score_log(set_dir: Path, row: Any, settings: Any, model: Any) -> list[dict[str, Any]]:
    """Every curve of one log's mixed groups, per reader and rule."""
    calibration = Calibration.from_file(set_dir / row.calibration)
    n_truth = min(int(row.n_curves), len(calibration.curves))
    mask = tifffile.imread(set_dir / row.mask)
    height, width = mask.shape
    readings = {"true mask": read_track(mask_probs(mask, NUM_CLASSES), calibration, settings.extract)}
    if not mixed_groups(readings["true mask"].plan.kinds[:n_truth],
                        [c.backup_wraps > 0 for c in calibration.curves[:n_truth]]):
        return []
    if model is not None:
        image, rgb = decode_colour(set_dir / row.image)
        readings["net"] = read_scan(model, image, calibration, settings.evaluate.tile_width,
                                    settings.evaluate.tile_overlap, settings.extract, "cpu", rgb=rgb).reading
    values = truth_values(set_dir / row.las, calibration, width, n_truth)
    lo, hi = truth_band(drawn_tracks(values, calibration, height))
    records = []
    for reader, reading in readings.items():
        kinds = reading.plan.kinds[:n_truth]
        lines = reading.rows[:n_truth]  # in today's order
        backup = [c.backup_wraps > 0 for c in calibration.curves[:n_truth]]
        orders = {"now": np.arange(n_truth), "before": same_class_order(lines, kinds)}
        own = best_assignment((lines + 0.5) / height, lo, hi, alike_groups(kinds))
        for group in mixed_groups(kinds, backup):
            for k in group:
                record = {"id": row.id, "reader": reader, "curve": k, "style": reading.plan.labels[k],
                          "backup": backup[k], "group": len(group)}
                for rule, order in orders.items():
                    record[f"error {rule}"] = value_error(calibration, lines[order[k]], height, k, values[k])
                    record[f"own line {rule}"] = bool(order[k] == own[k])
                records.append(record)
    return records


def table(records: list[dict[str, Any]]) -> str:
    header = ["Reader", "Curves (logs)", "Own line: before / now", "Mean value error, track widths: before / now",
              "median", "Curves better / worse by > 0.01"]
    out = []
    for reader in dict.fromkeys(r["reader"] for r in records):
        picked = [r for r in records if r["reader"] == reader]
        before, now = (np.array([r[f"error {rule}"] for r in picked]) for rule in RULES)
        own = [sum(r[f"own line {rule}"] for r in picked) for rule in RULES]
        out.append([reader, f"{len(picked)} ({len({r['id'] for r in picked})})", f"{own[0]} / {own[1]}",
                    f"{np.nanmean(before):.4f} / {np.nanmean(now):.4f}",
                    f"{np.nanmedian(before):.4f} / {np.nanmedian(now):.4f}",
                    f"{int((now < before - 0.01).sum())} / {int((now > before + 0.01).sum())}"])
    return markdown_table(header, out, right={1, 2, 3, 4, 5})


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = log_parser(__doc__.splitlines()[0], max_logs=0)
    parser.add_argument("--name", default=None, help="results file name (default alike-wraps-<split>)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    settings = load_settings(Path(__file__).resolve().parents[1] / "params.yaml", args.profile)
    set_dir = chosen_set(args, settings)
    model = load_model(args.model, map_location="cpu") if args.model else None
    load_before = os.getloadavg()
    records = []
    for row in tqdm(list(select_logs(set_dir, args.split, args.max_logs).itertuples(index=False)), desc="logs"):
        records += score_log(set_dir, row, settings, model)
    record = machine(load_before)
    document = {"set": str(set_dir), "split": args.split, "max_logs": args.max_logs,
                "model": str(args.model) if args.model else None, "curves": records, "machine": record}
    body = (f"Split `{args.split}` of `{set_dir}`, {args.max_logs or 'all'} logs; profile `{args.profile}`. The curves "
            "of groups drawn alike that mix curves with and without a backup scale, written under their mnemonics by "
            "the rule before (the higher line first) and now (lines through an edge to the curves with a backup "
            "scale first).\n\n" + (table(records) if records else "No such group.") + f"\n\n{load_note(record)}\n")
    write_results(args.out, args.name or f"alike-wraps-{args.split}", document,
                  "Curves drawn alike with and without a backup scale", body)
    return document


if __name__ == "__main__":
    main()
