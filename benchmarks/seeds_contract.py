"""The foreign renderer's scans as the seeds' contract describes them: two curves, a sidecar naming no style.

    python benchmarks/seeds_contract.py [--model MODEL_DIR] [--count 24] [--profile cpu] [--out results/]

The scans an operator sends most often carry the seeds' sidecar: curve A solid, curve B broken (or
a thinner solid line: the seeds told them apart "solid vs dashed, thick vs thin"), no `style` key.
The evaluate stage's foreign set names every curve's style and holds 1-5 curves, so it does not
measure that case. This script renders `--count` scans with the foreign renderer
(`foreign.legend: seeds`, two curves per track, otherwise the profile's `foreign` settings: test
wells only, evaluation only, never tuned on) into a temporary folder and evaluates the model on
them exactly as the evaluate stage does (`evaluation.evaluate.evaluate_model`), twice: with the
sidecars as written (curve B read as any broken style) and with each curve's drawn style named,
as a legend-reading calibration would. Reported per curve, per storage (1-bit / 8-bit) and per
style curve B was drawn in (a thin solid B is the case `reading.pens.read_thick_thin`
reads again as thick vs thin); the worst log's overlay of the unstyled reading is copied beside the results.
Writes `seeds_contract.json`, `seeds_contract.md` and `seeds_contract-worst.png` into `--out`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _record import load_note, machine, markdown_table, write_results

from veernet_pipeline.config import load_settings
from veernet_pipeline.evaluation.evaluate import evaluate_model
from veernet_pipeline.foreign.dataset import FOREIGN_DIR, write_foreign_set
from veernet_pipeline.io.sets import EVALUATION_SPLIT, read_split

READINGS = ("unstyled", "styled")


def name_styles(set_dir: Path, out_dir: Path) -> None:
    """Copy the set to `out_dir` with each sidecar naming the style its curves were drawn in (the index's)."""
    shutil.copytree(set_dir, out_dir)
    for row in read_split(out_dir, EVALUATION_SPLIT).itertuples():
        path = out_dir / row.calibration
        sidecar = json.loads(path.read_text())
        for curve, style in zip(sidecar["curves"], row.styles.split(","), strict=True):
            curve["style"] = style
        path.write_text(json.dumps(sidecar, indent=2))


def groups(per_log: pd.DataFrame, index: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The curves of `per_log` by letter, by storage and (curve B) by the style drawn; empty groups left out."""
    frame = per_log.merge(index[["id", "styles", "bits"]].astype({"id": str}), on="id")
    frame["drawn"] = [styles.split(",")[ord(curve) - ord("A")] for styles, curve in zip(frame.styles, frame.curve,
                                                                                       strict=True)]
    chosen = {"all curves": frame, **{f"curve {c}": frame[frame.curve == c] for c in ("A", "B")},
              **{f"{bits}-bit": frame[frame.bits == bits] for bits in (1, 8)}}
    b = frame[frame.curve == "B"]
    chosen |= {f"B drawn {style}": b[b.drawn == style] for style in sorted(set(b.drawn))}
    return {name: found for name, found in chosen.items() if len(found)}


def figures(frame: pd.DataFrame) -> dict[str, float]:
    """Median and p10 R², median MAE, median coverage and the mean share of columns a curve is swapped in."""
    r2 = frame["r2"].to_numpy(dtype=np.float64)
    return {"curves": int(len(frame)), "r2_median": float(np.nanmedian(r2)), "r2_p10": float(np.nanpercentile(r2, 10)),
            "mae_median": float(np.nanmedian(frame["mae"])), "coverage_median": float(np.nanmedian(frame["coverage"])),
            "curve_swap_share_mean": float(np.nanmean(frame["curve_swap_share"]))}


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Render, evaluate both ways, and group; returns the document."""
    with tempfile.TemporaryDirectory(prefix="veernet-seeds-contract-") as tmp:
        work = Path(tmp)
        settings = load_settings(None, args.profile, [
            f"paths.synthetic={work / 'synthetic'}", "foreign.legend=seeds", "foreign.curves_per_track=[0, 1, 0, 0, 0]",
            f"foreign.count={args.count}"])
        model = args.model or load_settings(None, args.profile).path("models") / "multiclass"
        write_foreign_set(settings)
        sets = {"unstyled": settings.path("synthetic") / FOREIGN_DIR, "styled": work / "styled"}
        name_styles(sets["unstyled"], sets["styled"])
        index = read_split(sets["unstyled"], EVALUATION_SPLIT)
        document: dict[str, Any] = {"profile": args.profile, "model": str(model), "count": args.count,
                                    "foreign": settings.section("foreign"), "readings": {}}
        for reading in READINGS:
            start = time.perf_counter()
            evaluate_model(model, sets[reading], work / f"eval-{reading}", settings.evaluate, settings.extract,
                           split=EVALUATION_SPLIT, seed=settings.seed, low_confidence=settings.infer.low_confidence)
            per_log = pd.read_csv(work / f"eval-{reading}" / "per_log.csv", dtype={"id": str})
            swaps = per_log.drop_duplicates("id")["swap_share"].to_numpy(dtype=np.float64)
            document["readings"][reading] = {
                "seconds": time.perf_counter() - start, "swap_share_over_logs": {
                    "median": float(np.nanmedian(swaps)), "mean": float(np.nanmean(swaps))},
                "groups": {name: figures(frame) for name, frame in groups(per_log, index).items()}}
        args.out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(work / "eval-unstyled" / "overlay.png", args.out / "seeds_contract-worst.png")
    return document


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, help="multiclass model folder (default: paths.models/multiclass)")
    parser.add_argument("--count", type=int, default=24, help="scans to render (the issue's check had 24)")
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = parser.parse_args()
    load_before = os.getloadavg()
    document = run(args)
    document["machine"] = record = machine(load_before)
    readings = document["readings"]
    rows = []
    for name in readings["unstyled"]["groups"]:
        cells = [name, str(readings["unstyled"]["groups"][name]["curves"])]
        for reading in READINGS:
            found = readings[reading]["groups"].get(name)
            cells += ([f"{found['r2_median']:.3f}", f"{found['r2_p10']:.3f}", f"{found['mae_median']:.4f}",
                       f"{100 * found['curve_swap_share_mean']:.1f} %"] if found else ["", "", "", ""])
        rows.append(cells)
    header = ["curves", "n", *[f"{reading} {figure}" for reading in READINGS
                               for figure in ("R² median", "R² p10", "MAE median", "curve swaps mean")]]
    body = (markdown_table(header, rows, set(range(1, len(header))))
            + f"\n{args.count} foreign scans (test wells; `foreign.legend: seeds`, two curves per track: A solid, B "
            f"one broken style or a thinner solid), profile `{args.profile}`, model `{document['model']}`, read as "
            "the evaluate stage reads (mirroring, the profile's path search). **unstyled**: the sidecars as the "
            "seeds write them (no style: A solid, B any broken style); **styled**: the same scans with each "
            "curve's drawn style named. "
            "Swap share over logs, median / mean: " + ", ".join(
                f"{r} {100 * readings[r]['swap_share_over_logs']['median']:.1f} % / "
                f"{100 * readings[r]['swap_share_over_logs']['mean']:.1f} %" for r in READINGS)
            + ". Evaluation seconds: " + ", ".join(f"{r} {readings[r]['seconds']:.0f}" for r in READINGS)
            + f". Worst log (unstyled): [seeds_contract-worst.png](seeds_contract-worst.png).\n\n{load_note(record)}\n")
    write_results(args.out, "seeds_contract", document, "Foreign scans under the seeds' sidecar contract", body)


if __name__ == "__main__":
    main()
