"""When to read a scan enlarged: `extract.enlarge`'s rule against a legend cue and three ways of joining both scales.

    python benchmarks/enlarge.py [--model DIR] [--profile cpu] [--val-logs 80] [--test-logs 0]
                                 [--foreign 72 120] [--factor 1.5] [--out DIR]

`reading.enlarge.read_scan` reads a scan again enlarged `factor` times where a curve the sidecar names
shows in fewer than `extract.enlarge.below` of the columns (it is "missing"), and keeps the reading with
fewer missing curves. It is off by default because on our own logs the few scans it takes are read worse
(docs/accuracy.md, "Reading enlarged"). This reads every scan of each set at its size and, where a curve
is missing, enlarged, and scores each way of choosing on the same maps:

- **at size**: never enlarged (the default);
- **fewer missing**: today's rule;
- **fewer missing, legend share +m**: and the enlarged map's legend share (`legend_share`: of the curve
  ink, the share of its probability on the classes the sidecar names) at least m above the first's;
- **mean / max / pick**: the two maps joined on the scan's grid and read once: their mean, their
  per-class maximum, or each named curve's classes from the scale where that curve shows in more columns.

The sets: the first `--val-logs` val logs as drawn and the same logs drawn smaller by 1/`factor` (box
mean, 1-bit scans thresholded again: prints whose dashes are shorter than the generator's, from our own
logs), the foreign set, the foreign scans `--foreign FIRST LAST` rendered afresh (never read before),
and the first `--test-logs` test logs (0 = all). Scored as `evaluate` scores (curves drawn alike under
their best assignment). A choice is made on the val sets only; the others test it.

Writes `enlarge.json` and `enlarge.md` into `--out` (default: `results/` beside this script).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from _record import load_note, machine, markdown_table, write_results
from scipy.stats import wilcoxon
from tqdm import tqdm

from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.evaluation.evaluate import score_curves, select_logs
from veernet_pipeline.evaluation.truth import truth_tracks
from veernet_pipeline.foreign.dataset import evaluation_wells, render_foreign, write_scan
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.classes import STYLES, style_class
from veernet_pipeline.io.tiff import decode_scan
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.reading.enlarge import read_at, style_support
from veernet_pipeline.reading.resolution import to_net_grid
from veernet_pipeline.reading.track import read_track

CURVE_CLASSES = [style_class(s) for s in STYLES]
MARGINS = (0.0, 0.05)
JOINED = ("mean", "max", "pick")
Scan = tuple[str, np.ndarray, Calibration, Path, int]  # id, image, sidecar, LAS, curves scored


def shrink(image: np.ndarray, factor: float) -> np.ndarray:
    """The scan drawn `factor` times smaller: `to_net_grid`'s box mean, thresholded at 128 again where it was 1-bit."""
    small = to_net_grid(image, (1.0 / factor, 1.0 / factor))
    return np.where(small >= 128, 255, 0).astype(np.uint8) if np.isin(image, (0, 255)).all() else small


def legend_share(probs: np.ndarray, classes: list[tuple[int, ...]]) -> float:
    """Of the curve ink (curve classes summed >= 0.5), the share of its curve probability on the named classes.

    Shape:
        probs: (7, H, W) on the style classes.
    """
    curve = probs[CURVE_CLASSES].sum(axis=0)
    ink = curve >= 0.5
    named = probs[sorted({c for group in classes for c in group})].sum(axis=0)
    return float(named[ink].sum() / curve[ink].sum()) if ink.any() else 0.0


def joined_maps(at_size: np.ndarray, enlarged: np.ndarray, classes: list[tuple[int, ...]]) -> dict[str, np.ndarray]:
    """The two maps on one grid joined three ways (`JOINED`); `pick` takes each curve's classes from the map
    where that curve shows in more columns (`style_support`).

    Shape:
        at_size, enlarged: (7, H, W). Returns (7, H, W) arrays.
    """
    pick = at_size.copy()
    for group, first, second in zip(classes, style_support(at_size, classes), style_support(enlarged, classes),
                                    strict=True):
        if second > first:
            pick[list(group)] = enlarged[list(group)]
    return {"mean": (at_size + enlarged) / 2, "max": np.maximum(at_size, enlarged), "pick": pick}


def read_scan_ways(model: Any, settings: Settings, scan: Scan, factor: float) -> dict[str, Any]:
    """One scan's cues and its curves' scores read each way (the enlarged ways only where a curve is missing)."""
    name, image, calibration, las, n_curves = scan
    ev, extract = settings.evaluate, settings.extract
    height, width = image.shape
    truth = truth_tracks(las, calibration, width, n_curves, height)

    def scores(reading: Any) -> list[dict[str, float]]:
        found, _, _ = score_curves(reading.rows[:n_curves], truth, reading.plan.classes[:n_curves], height)
        return [{"r2": float(m["r2"]), "mae": float(m["mae"])} for m in found]

    _, probs, reading = read_at(model, image, calibration, ev.tile_width, ev.tile_overlap, extract, "cpu", (1.0, 1.0))
    classes = reading.plan.classes
    support = style_support(probs, classes)
    record: dict[str, Any] = {"id": name, "styles": [c.style for c in calibration.curves][:n_curves],
                              "missing": int((support < extract.enlarge.below).sum()),
                              "legend_share": legend_share(probs, classes), "ways": {"at size": scores(reading)}}
    if record["missing"] == 0:
        return record
    _, big, big_reading = read_at(model, image, calibration, ev.tile_width, ev.tile_overlap, extract, "cpu",
                                  (factor, factor))
    record["missing_enlarged"] = int((style_support(big, classes) < extract.enlarge.below).sum())
    record["legend_share_enlarged"] = legend_share(big, classes)
    record["ways"]["enlarged"] = scores(big_reading)
    on_grid = F.interpolate(torch.from_numpy(big)[None], size=image.shape, mode="area")[0].numpy()
    for way, joined in joined_maps(probs, on_grid, classes).items():
        record["ways"][way] = scores(read_track(joined, calibration, extract))
    return record


def choosers() -> dict[str, Callable[[dict[str, Any]], str]]:
    """Each way of choosing: the name of the reading it keeps for a scan's record."""
    def fewer(record: dict[str, Any], margin: float | None = None) -> str:
        taken = "missing_enlarged" in record and record["missing_enlarged"] < record["missing"]
        if taken and margin is not None:
            taken = record["legend_share_enlarged"] >= record["legend_share"] + margin
        return "enlarged" if taken else "at size"

    ways: dict[str, Callable[[dict[str, Any]], str]] = {"at size": lambda r: "at size", "fewer missing": fewer}
    for margin in MARGINS:
        ways[f"fewer missing, legend share +{margin:g}"] = lambda r, m=margin: fewer(r, m)
    for way in JOINED:
        ways[way] = lambda r, w=way: w if w in r["ways"] else "at size"
    return ways


def summarise(records: list[dict[str, Any]], choose: Callable[[dict[str, Any]], str]) -> dict[str, Any]:
    """All curves' and each style's median R^2, the mean per-style median MAE, and the curves the choice moved."""
    curves, moved, changed_scans = [], [], 0
    for record in records:
        way = choose(record)
        changed_scans += way != "at size"
        for k, got in enumerate(record["ways"][way]):
            curves.append((record["styles"][k], got["r2"], got["mae"]))
            if way != "at size":
                moved.append((record["ways"]["at size"][k]["mae"], got["mae"]))
    styles = sorted({style for style, _, _ in curves})
    per_style = {s: float(np.nanmedian([r2 for style, r2, _ in curves if style == s])) for s in styles}
    pairs = np.array([p for p in moved if np.isfinite(p).all()]).reshape(-1, 2)
    lower, higher = int((pairs[:, 1] < pairs[:, 0]).sum()), int((pairs[:, 1] > pairs[:, 0]).sum())
    worse_p = float(wilcoxon(pairs[:, 1], pairs[:, 0], alternative="greater").pvalue) if lower + higher else None
    return {"changed_scans": changed_scans, "all_r2": float(np.nanmedian([r2 for _, r2, _ in curves])),
            "lowest_style": min(per_style, key=per_style.get), "lowest_r2": min(per_style.values()),
            "per_style_r2": per_style,
            "mean_style_mae": float(np.mean([np.nanmedian([m for s, _, m in curves if s == style])
                                             for style in styles])),
            "mae_lower": lower, "mae_higher": higher, "worse_p": worse_p}


def own_scans(set_dir: Path, split: str, max_logs: int, factor: float = 1.0) -> Iterator[Scan]:
    """A synthetic set's logs, drawn `factor` times smaller when `factor` is above 1."""
    for row in tqdm(list(select_logs(set_dir, split, max_logs).itertuples(index=False)), desc=f"{split} {factor:g}"):
        calibration = Calibration.from_file(set_dir / row.calibration)
        image = decode_scan(set_dir / row.image)
        yield (f"{split}/{row.id}", shrink(image, factor) if factor > 1.0 else image, calibration,
               set_dir / row.las, min(int(row.n_curves), len(calibration.curves)))


def fresh_foreign(settings: Settings, first: int, last: int, folder: Path) -> Iterator[Scan]:
    """Foreign scans `first`..`last - 1` rendered now (scan i depends only on the seed and i), as stored."""
    wells = evaluation_wells(settings)
    for index in tqdm(range(first, last), desc="fresh foreign"):
        found = render_foreign(settings, index, wells)
        row = write_scan(folder, f"{index:06d}", found)
        yield (f"foreign/{index:06d}", decode_scan(folder / str(row["image"])), found.calibration,
               folder / str(row["las"]), len(found.log.curves))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Read every set every way, summarise each way of choosing, write the JSON and the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--val-logs", type=int, default=80)
    parser.add_argument("--test-logs", type=int, default=0, help="first N test logs (0 = all; -1 = none)")
    parser.add_argument("--foreign", type=int, nargs=2, default=[72, 120], metavar=("FIRST", "LAST"))
    parser.add_argument("--factor", type=float, default=1.5)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    args = parser.parse_args(argv)
    settings, load = load_settings(None, args.profile), os.getloadavg()
    model = load_model(args.model or settings.path("models") / "multiclass", map_location="cpu")
    synthetic = settings.path("synthetic")
    with tempfile.TemporaryDirectory() as folder:
        sets = {"val, as drawn": own_scans(synthetic / "multiclass", "val", args.val_logs),
                f"val, drawn 1/{args.factor:g}": own_scans(synthetic / "multiclass", "val", args.val_logs, args.factor),
                "foreign set": own_scans(synthetic / settings.evaluate.foreign, "test", 0),
                f"foreign {args.foreign[0]}-{args.foreign[1] - 1}, fresh": fresh_foreign(settings, *args.foreign,
                                                                                          Path(folder))}
        if args.test_logs >= 0:
            sets["test"] = own_scans(synthetic / "multiclass", "test", args.test_logs)
        records = {name: [read_scan_ways(model, settings, scan, args.factor) for scan in scans]
                   for name, scans in sets.items()}
    summary = {name: {way: summarise(found, choose) for way, choose in choosers().items()}
               for name, found in records.items()}
    rows = [[name, way, f"{s['changed_scans']} / {len(records[name])}", f"{s['all_r2']:.4f}",
             f"{s['lowest_r2']:.3f} ({s['lowest_style']})",
             " / ".join(f"{s['per_style_r2'][k]:.3f}" if k in s["per_style_r2"] else "-" for k in sorted(STYLES)),
             f"{s['mean_style_mae']:.4f}", f"{s['mae_lower']} / {s['mae_higher']}",
             "-" if s["worse_p"] is None else f"{s['worse_p']:.3g}"]
            for name, ways in summary.items() for way, s in ways.items()]
    table = markdown_table(["set", "way", "scans changed", "all curves: median R²", "lowest style",
                            "median R² per style (" + " / ".join(sorted(STYLES)) + ")", "mean per-style MAE",
                            "changed curves: MAE lower / higher", "p (higher)"], rows, right={2, 3, 6, 7, 8})
    record = machine(load)
    body = (f"Model `{args.model or 'paths.models/multiclass'}`, profile `{args.profile}`, enlargement "
            f"{args.factor:g}x where a named curve shows in fewer than {settings.extract.enlarge.below:g} of the "
            "columns. 'p (higher)' is the one-sided Wilcoxon p that the changed curves' MAE is higher than at "
            "size.\n\n" + table + "\n" + load_note(record) + "\n")
    document = {"settings": {k: str(v) for k, v in vars(args).items()}, "machine": record, "summary": summary,
                "scans": records}
    write_results(args.out, "enlarge", document, "When to read a scan enlarged", body)
    return document


if __name__ == "__main__":
    main()
