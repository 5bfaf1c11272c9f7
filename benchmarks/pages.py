"""Whole-page digitising: layout detection on rendered pages, and page -> per-well LAS against the native curves.

    python benchmarks/pages.py [--pages 60] [--wide-pages 20] [--digitize-pages 4] [--curves MIN MAX]
                               [--model DIR|models:/URI] [--out DIR] [--sheet PNG]

Detection (`veernet layout`'s `detect_layout`) on rendered pages (`synthetic.page`, default
shapes: 2-3 tracks of 450-1,000 px, a main section of 4,000-12,000 rows, a repeat section on 60 %,
bilevel on 60 %, skew up to 1 degree on 40 %, light or heavy grids, the depth column between or
beside the tracks) and on "wide" pages of 4-5 tracks of 300-700 px. Scored against each page's
exact layout: a page's tracks are right when as many were found and both edges of each are
within 3 px (the bar: 95 % of pages); the depth column when the one found overlaps the true one
by IoU >= 0.5; depth numbers, the share of true number rows found within 6 px; a header, banner
or track-header band, when at least 90 % of its rows lie in bands found not to be log and at most
5 % in a section found; sections, when as many were found, with the error of their edges.

Digitising: each of the first `--digitize-pages` pages goes through `inference.page.digitize_page`
(cut by the layout, each strip read by `digitize_scan`, tracks merged per section) and the LAS
values are compared with the page's native curves in track units (`curve_metrics`: R^2, MAE),
per curve, and summarised per reader and layout, per style (the layout's legend) and per number of curves
in the track. `--curves` sets how many curves a default page's track holds (1-2 unless given; real tracks
hold two to five). Readers: the oracle, a per-pixel net that reads the page's true class mask (so the
geometry, calibration and merging are tested apart from any trained net), and a trained VeerNet on
the page's pixels: `--model` (a folder or a `models:/` URI), else the registered `infer.model_uri`
when the project's tracking store holds it. Without one, the JSON's `model` says that only the
oracle read the pages; no net figure is made up. Layouts: the true one, and the detected one with
the values an operator would fill in taken from the truth (curves from the true track it overlaps
most, depths read at the detected number rows), so detection errors show in the curves.

Writes `pages.json` and `pages.md` into `--out` (default: `results/` beside this script);
`--sheet` also writes a contact sheet of rendered pages with their true layout (docs/pages.md).
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from _record import load_note, machine, markdown_table, write_results
from PIL import Image
from torch import nn

from veernet_pipeline.config import Range, load_settings
from veernet_pipeline.evaluation.metrics import curve_metrics
from veernet_pipeline.inference.page import digitize_page
from veernet_pipeline.io.calibration import CurveScale
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.pages.detect import Detected, detect_layout
from veernet_pipeline.pages.layout import Layout, parse_layout
from veernet_pipeline.pages.picture import draw_outline, outline_of
from veernet_pipeline.synthetic.curves import load_wells
from veernet_pipeline.synthetic.page import PageParams, SyntheticPage, render_page
from veernet_pipeline.tracking import store
from veernet_pipeline.tracking.store import TRACKING_URI_ENV

log = logging.getLogger(__name__)
SEED = 20261123
TOLERANCE_PX = 3
WIDE = PageParams(tracks=Range(min=4, max=5), track_width=Range(min=300, max=700))


class MaskOracle(nn.Module):
    """A real per-pixel net reading a class mask drawn as gray (`mask_picture`): class c of `io.classes` at gray
    level 255 (1 - c / 6), each class's logit falls off with the distance of the pixel from its level."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("levels", 1.0 - torch.arange(NUM_CLASSES, dtype=torch.float32) / (NUM_CLASSES - 1))

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        # x: (N, 1, H, W) gray in 0..1. Levels are 1/6 apart: 60 per unit keeps the right class 5 nats ahead.
        return -60.0 * (x - self.levels.view(1, -1, 1, 1)).abs()


def mask_picture(mask: np.ndarray) -> np.ndarray:
    """The class mask as the gray levels `MaskOracle` reads. Shape: (H, W) uint8."""
    return np.round(255 * (1 - mask.astype(np.float64) / (NUM_CLASSES - 1))).astype(np.uint8)


# --- detection -------------------------------------------------------------------------------

def _covered(band: tuple[int, int], spans: list[tuple[int, int]]) -> float:
    rows = np.zeros(band[1] - band[0], dtype=bool)
    for a, b in spans:
        rows[max(a, band[0]) - band[0]:max(min(b, band[1]) - band[0], 0)] = True
    return float(rows.mean()) if rows.size else 0.0


def _iou(a: tuple[int, int], b: tuple[int, int]) -> float:
    inter = max(0, min(a[1], b[1]) - max(a[0], b[0]))
    return inter / (max(a[1], b[1]) - min(a[0], b[0]))


def score_detection(truth: Layout, found: Detected) -> dict[str, Any]:
    """How `found` compares with the page's exact layout (see the module docstring)."""
    true_tracks = [(t.left, t.right) for t in truth.tracks]
    errors = [max(abs(a - c), abs(b - d)) for (a, b), (c, d) in zip(true_tracks, found.tracks, strict=False)]
    tracks_ok = len(found.tracks) == len(true_tracks) and max(errors, default=0) <= TOLERANCE_PX
    per_track = [any(max(abs(a - c), abs(b - d)) <= TOLERANCE_PX for c, d in found.tracks) for a, b in true_tracks]
    depth_true = (truth.depth_column.left, truth.depth_column.right)
    depth_ok = found.depth_column is not None and _iou(depth_true, found.depth_column) >= 0.5
    true_labels = [r for s in truth.sections for r in s.depth_label_rows]
    found_labels = np.array([r for rows in found.label_rows for r in rows])
    labels = [bool(found_labels.size and np.abs(found_labels - r).min() <= 6) for r in true_labels]
    sections = [(s.top, s.bottom) for s in found.sections]
    skipped = [(b.top, b.bottom) for b in found.bands if b.kind != "section"]
    bands: dict[str, list[bool]] = {"header": [], "banner": [], "track_header": [], "footer": []}
    for band in truth.skip:
        span = (band.top_row, band.bottom_row)
        bands[band.kind].append(_covered(span, skipped) >= 0.9 and _covered(span, sections) <= 0.05)
    section_errors = []
    if len(sections) == len(truth.sections):
        section_errors = [max(abs(s.top_row - a), abs(s.bottom_row - b)) for s, (a, b) in
                          zip(truth.sections, sections, strict=True)]
    return {"tracks": len(true_tracks), "tracks_found": len(found.tracks), "tracks_ok": tracks_ok,
            "track_edge_error_px": max(errors, default=None) if len(found.tracks) == len(true_tracks) else None,
            "per_track_ok": per_track, "depth_column_ok": depth_ok,
            "depth_side": "between" if truth.tracks[0].left < depth_true[0] < truth.tracks[-1].left else "side",
            "labels_found": float(np.mean(labels)) if labels else None,
            "sections_ok": len(sections) == len(truth.sections), "section_edge_error_px": section_errors,
            **{f"{kind}_ok": flags for kind, flags in bands.items()},
            "skew_true": truth.skew.angle_deg if truth.skew else 0.0, "skew_found": found.skew_deg}


# --- digitising ------------------------------------------------------------------------------

def filled_from_truth(found: Detected, truth: Layout) -> Layout | None:
    """The detected layout with what an operator fills in taken from the truth; None if nothing usable was found."""
    if not found.tracks or not found.sections:
        return None
    tracks = []
    for i, (a, b) in enumerate(found.tracks):
        best = max(truth.tracks, key=lambda t: min(b, t.right) - max(a, t.left))
        tracks.append({"name": f"T{i + 1}:{best.name}", "left": a, "right": b,
                       "curves": [c.model_dump(exclude_none=True) for c in best.curves]})
    # A true track split in two by detection would carry its curves twice; keep the larger piece.
    seen: dict[str, int] = {}
    for i, t in enumerate(tracks):
        name = t["name"].split(":")[1]
        if name in seen and (t["right"] - t["left"]) <= tracks[seen[name]]["right"] - tracks[seen[name]]["left"]:
            t["drop"] = True
        elif name in seen:
            tracks[seen[name]]["drop"] = True
            seen[name] = i
        else:
            seen[name] = i
    sections = []
    for (name, kind), band, labels in zip(found.section_names(), found.sections, found.label_rows, strict=True):
        true = max(truth.sections, key=lambda s: min(band.bottom, s.bottom_row) - max(band.top, s.top_row))
        rows = [labels[0], labels[-1]] if len(labels) >= 2 else [band.top, band.bottom - 1]
        points = [{"row": r, "depth": float(true.depth.depth_at(r))} for r in rows]
        sections.append({"name": name, "kind": kind, "top_row": band.top, "bottom_row": band.bottom,
                         "depth": {"unit": true.depth.unit, "points": points}})
    data = {"tracks": [{k: v for k, v in t.items() if k != "drop"} for t in tracks if not t.get("drop")],
            "sections": sections, "well": truth.well_items()}
    if found.skew_deg:
        data["skew"] = {"angle_deg": found.skew_deg, "pivot_row": found.pivot_row}
    return parse_layout(data, "detected layout filled from the truth")


def _track_units(values: np.ndarray, curve: Any) -> np.ndarray:
    scale = CurveScale(curve.mnemonic, curve.unit, curve.right_value, curve.left_value, curve.scale,
                       curve.backup.max_wraps if curve.backup else 0)
    return scale.value_to_fraction(values)


def score_digitized(page: SyntheticPage, layout: Layout, model: nn.Module, image: np.ndarray,
                    settings: Any) -> list[dict[str, Any]]:
    """Per true curve: R^2 / MAE in track units of the LAS values against the native curve, and coverage."""
    sections = digitize_page(model, image, layout, "stored", settings.infer.tile_width, settings.infer.tile_overlap,
                             settings.extract)
    rows = []
    for truth in page.truth:
        true_section = next(s for s in page.layout.sections if s.name == truth.section)
        true_track = next(t for t in page.layout.tracks if t.name == truth.track)
        log_ = max(sections, key=lambda s: min(s.section.bottom_row, true_section.bottom_row)
                   - max(s.section.top_row, true_section.top_row))
        by_name = {c.mnemonic: c.values for c in log_.curves}
        inside = (log_.depth >= truth.depth.min()) & (log_.depth <= truth.depth.max())
        for k, curve in enumerate(true_track.curves):
            true = np.where(inside, np.interp(log_.depth, truth.depth, truth.values[k]), np.nan)
            true_units = _track_units(true, curve)
            # Values past the last backup scale are pegged at the edge: the picture cannot show them.
            drawn, _ = CurveScale(curve.mnemonic, "", 0, 1, backup_wraps=curve.backup.max_wraps if curve.backup
                                  else 0).wrap(true_units)
            true_units[(drawn < 0) | (drawn > 1)] = np.nan
            read = by_name.get(curve.mnemonic)
            pred = _track_units(read, curve) if read is not None else np.full(true.shape, np.nan)
            scores = curve_metrics(pred, true_units)
            rows.append({"section": truth.section, "track": truth.track, "curve": curve.mnemonic,
                         "class": k + 1, "scale": curve.scale, "style": curve.style or "none",
                         "track_curves": len(true_track.curves), "r2": scores["r2"], "mae": scores["mae"],
                         "coverage": scores["coverage"]})
    return rows


# --- report ----------------------------------------------------------------------------------

def _rate(flags: list[bool]) -> str:
    return f"{np.mean(flags):.1%} ({sum(flags)}/{len(flags)})" if flags else "n/a"


def summarise(pages: list[dict[str, Any]]) -> dict[str, Any]:
    flat = {key: [f for p in pages for f in p[key]] for key in ("header_ok", "banner_ok", "track_header_ok",
                                                               "footer_ok", "per_track_ok")}
    labels = [p["labels_found"] for p in pages if p["labels_found"] is not None]
    errors = [e for p in pages for e in p["section_edge_error_px"]]
    return {"pages": len(pages), "tracks_ok": float(np.mean([p["tracks_ok"] for p in pages])),
            "tracks_ok_text": _rate([p["tracks_ok"] for p in pages]),
            "per_track": _rate(flat["per_track_ok"]),
            "depth_column": _rate([p["depth_column_ok"] for p in pages]),
            "depth_between": _rate([p["depth_column_ok"] for p in pages if p["depth_side"] == "between"]),
            "depth_side": _rate([p["depth_column_ok"] for p in pages if p["depth_side"] == "side"]),
            "labels_found_median": float(np.median(labels)) if labels else None,
            "sections": _rate([p["sections_ok"] for p in pages]),
            "section_edge_median_px": float(np.median(errors)) if errors else None,
            "section_edge_p90_px": float(np.percentile(errors, 90)) if errors else None,
            **{key: _rate(flat[key]) for key in ("header_ok", "banner_ok", "track_header_ok", "footer_ok")},
            "skew_error_max_deg": float(max(abs(p["skew_true"] - p["skew_found"]) for p in pages))}


def detection_table(summaries: dict[str, dict[str, Any]]) -> str:
    header = ["Pages", "N", "Tracks within 3 px (page)", "Tracks (each)", "Depth column", "between / beside",
              "Depth numbers found (median)", "Header", "Banner", "Track headers", "Footer", "Sections",
              "Section edges median / p90 px", "Max skew error deg"]
    rows = [[name, str(s["pages"]), s["tracks_ok_text"], s["per_track"], s["depth_column"],
             f"{s['depth_between']} / {s['depth_side']}", f"{s['labels_found_median']:.0%}" if s[
                 "labels_found_median"] is not None else "n/a", s["header_ok"], s["banner_ok"], s["track_header_ok"],
             s["footer_ok"], s["sections"], f"{s['section_edge_median_px']:.0f} / {s['section_edge_p90_px']:.0f}"
             if s["section_edge_median_px"] is not None else "n/a", f"{s['skew_error_max_deg']:.3f}"]
            for name, s in summaries.items()]
    return markdown_table(header, rows, right={1})


def _median_r2(rows: list[dict[str, Any]]) -> str:
    return f"{np.nanmedian([r['r2'] for r in rows]):.3f} ({len(rows)})" if rows else ""


def digitizing_table(rows: list[dict[str, Any]]) -> str:
    header = ["Reader", "Layout", "Curves", "R² median", "R² p10", "MAE median", "MAE p90", "Coverage median"]
    out = []
    for reader in dict.fromkeys(r["reader"] for r in rows):
        for layout in dict.fromkeys(r["layout"] for r in rows if r["reader"] == reader):
            picked = [r for r in rows if r["reader"] == reader and r["layout"] == layout]
            r2 = np.array([r["r2"] for r in picked], dtype=float)
            mae = np.array([r["mae"] for r in picked], dtype=float)
            cover = np.array([r["coverage"] for r in picked], dtype=float)
            out.append([reader, layout, str(len(picked)), f"{np.nanmedian(r2):.4f}", f"{np.nanpercentile(r2, 10):.4f}",
                        f"{np.nanmedian(mae):.4f}", f"{np.nanpercentile(mae, 90):.4f}", f"{np.nanmedian(cover):.3f}"])
    return markdown_table(header, out, right={2, 3, 4, 5, 6, 7})


def breakdown_table(rows: list[dict[str, Any]]) -> str:
    """Median R² (curves) per style the layout names and per number of curves in the track."""
    styles = sorted({r["style"] for r in rows})
    counts = sorted({r["track_curves"] for r in rows})
    header = ["Reader", "Layout", *styles, *(f"tracks of {n}" for n in counts)]
    out = []
    for reader in dict.fromkeys(r["reader"] for r in rows):
        for layout in dict.fromkeys(r["layout"] for r in rows if r["reader"] == reader):
            picked = [r for r in rows if r["reader"] == reader and r["layout"] == layout]
            out.append([reader, layout, *(_median_r2([r for r in picked if r["style"] == s]) for s in styles),
                        *(_median_r2([r for r in picked if r["track_curves"] == n]) for n in counts)])
    return markdown_table(header, out, right=set(range(2, len(header))))


def contact_sheet(path: Path, pages: list[SyntheticPage], height: int = 1400) -> None:
    """Rendered pages side by side, each reduced for viewing with its true layout drawn over it."""
    pictures = [draw_outline(p.image, outline_of(p.layout), f"page {i}: true layout", max_rows=height)
                for i, p in enumerate(pages)]
    sheet = Image.new("RGB", (sum(p.size[0] for p in pictures) + 10 * len(pictures),
                              max(p.size[1] for p in pictures)), (255, 255, 255))
    x = 0
    for picture in pictures:
        sheet.paste(picture, (x, 0))
        x += picture.size[0] + 10
    path.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(path)


def trained_model(settings: Any, choice: str | None) -> tuple[str, Path | None]:
    """(what read the pages, the model folder or None): `--model`, else the registered model if a store holds it."""
    if choice and not choice.startswith("models:/"):
        return Path(choice).name, Path(choice)
    uri = choice or settings.infer.model_uri
    oracle_only = "only the per-pixel oracle read the pages"
    # Looking a model up in a store that does not exist would create an empty one in the project folder.
    if not choice and TRACKING_URI_ENV not in os.environ and not (settings.root / "mlruns.db").exists():
        return f"none: no tracking store ({settings.root / 'mlruns.db'}); {oracle_only}", None
    try:
        folder, version = store.download_model(settings.root, uri, settings.path("models") / "registry")
    except LookupError as exc:
        if choice:
            raise
        return f"none: {exc}; {oracle_only}", None
    return f"{uri} (version {version})", folder


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=SEED, help="seed of the rendered pages (another seed: pages the "
                                                               "detector's thresholds were never looked at on)")
    parser.add_argument("--pages", type=int, default=60, help="rendered pages of the default shape (detection)")
    parser.add_argument("--wide-pages", type=int, default=20, help="rendered pages of 4-5 tracks (detection)")
    parser.add_argument("--digitize-pages", type=int, default=4, help="of the default pages, how many to digitise")
    parser.add_argument("--curves", type=int, nargs=2, metavar=("MIN", "MAX"),
                        help="curves per track on the default pages (default: PageParams', 1-2)")
    parser.add_argument("--model", help="a VeerNet folder (weights.pt + model.json) or a models:/ URI; default: the "
                                        "registered infer.model_uri if the tracking store holds it")
    parser.add_argument("--profile", default="cpu", help="params.yaml profile for rendering and reading params")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    parser.add_argument("--sheet", type=Path, help="also write a contact sheet of the first pages here")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    settings = load_settings(Path(__file__).resolve().parents[1] / "params.yaml", args.profile)
    wells = load_wells("")
    load_before = os.getloadavg()
    results: dict[str, list[dict[str, Any]]] = {}
    digitized: list[dict[str, Any]] = []
    kept: list[SyntheticPage] = []
    readers: dict[str, nn.Module] = {"oracle (true mask)": MaskOracle().eval()}
    model_name, model_dir = trained_model(settings, args.model)
    if model_dir is not None:
        readers[f"VeerNet {model_name}"] = load_model(model_dir)
    timings = []
    default = PageParams() if args.curves is None else PageParams(curves=Range(min=args.curves[0],
                                                                                max=args.curves[1]))
    for name, params, count, offset in (("default", default, args.pages, 0), ("wide", WIDE, args.wide_pages,
                                                                              100_000)):
        results[name] = []
        for index in range(count):
            page = render_page(args.seed, offset + index, params, settings.synthesize, wells)
            started = time.perf_counter()
            found = detect_layout(page.image)
            timings.append(time.perf_counter() - started)
            results[name].append({"index": offset + index, "shape": list(page.image.shape),
                                  "artefacts": list(page.artefacts), **score_detection(page.layout, found)})
            if name == "default" and index < 3:
                kept.append(page)
            if name != "default" or index >= args.digitize_pages:
                continue
            filled = filled_from_truth(found, page.layout)
            for reader, model in readers.items():
                image = mask_picture(page.mask) if reader.startswith("oracle") else page.image
                for layout_name, layout in (("true", page.layout), ("detected, values from the truth", filled)):
                    if layout is None:
                        continue
                    for row in score_digitized(page, layout, model, image, settings):
                        digitized.append({"page": index, "reader": reader, "layout": layout_name, **row})
            log.warning("page %d digitised", index)
    summaries = {name: summarise(rows) for name, rows in results.items() if rows}
    record = machine(load_before)
    document = {"seed": args.seed, "curves_per_track": [default.curves.min, default.curves.max],
                "tolerance_px": TOLERANCE_PX, "summaries": summaries, "pages": results,
                "digitized": digitized, "detect_seconds_median": float(np.median(timings)) if timings else None,
                "model": model_name, "profile": args.profile, "machine": record}
    body = ("## Layout detection\n\n" + detection_table(summaries)
            + f"\nMedian detection time per page: {document['detect_seconds_median']:.2f} s.\n\n"
            + "## Page -> per-section LAS against the native curves (track units)\n\n"
            + (digitizing_table(digitized) + "\nMedian R² (curves) per style and per curves in the track:\n\n"
               + breakdown_table(digitized) if digitized else "no page digitised\n")
            + f"\n{load_note(record)}\n")
    write_results(args.out, "pages", document, "Whole-page digitising", body)
    if args.sheet:
        contact_sheet(args.sheet, kept)
    return document


if __name__ == "__main__":
    main()
