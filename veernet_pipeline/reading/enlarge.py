"""A scan read again enlarged when a curve its sidecar names barely shows: dashes drawn shorter than the net learnt.

The net names a broken style partly by its dash length in pixels (docs/accuracy.md): a print whose
dashes are shorter than the generator's (another plotter, a smaller print scale) shows its dashed
curve as dotted ink, its dash-dot as dashed. The style the sidecar names for such a curve is then
(almost) absent from the map, and the curve is read on ink that is not its own. So where a curve the
sidecar names reaches probability 0.5 in fewer than `extract.enlarge.below` of the columns
(`missing_curves`), the net reads the scan again enlarged by `extract.enlarge.factor`, and the
reading in which fewer named curves are missing is kept; a tie keeps the scan's own size. A scan
whose every named curve shows is read once, so own-style prints cost nothing more.

The rule was chosen on 30 val logs as drawn and the same logs shrunk by 1/1.5 (never on the foreign
set) and tested blind on foreign scans it had not seen. It is off by default (`factor` 1): on fresh
foreign scans it lifted the lowest style from -0.39 to 0.89, but it read 7 of the 168 own test logs
enlarged, most of them worse (docs/accuracy.md, "Reading enlarged").
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from torch import nn

from veernet_pipeline.config import ExtractParams
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.io.resolution import net_size
from veernet_pipeline.reading.predict import predict_probs
from veernet_pipeline.reading.resolution import to_net_grid, to_scan_grid
from veernet_pipeline.reading.styles import as_style_probs
from veernet_pipeline.reading.track import TrackReading, read_track

log = logging.getLogger(__name__)

SHOWS = 0.5  # a curve shows in a column where its classes' probability reaches this in some row


def style_support(probs: np.ndarray, classes: Sequence[Sequence[int]]) -> np.ndarray:
    """Per curve, the share of columns where its classes' summed probability reaches `SHOWS` in some row.

    Shape:
        probs: (C, H, W). Returns (K,) for K = len(classes).
    """
    return np.array([float((probs[list(c)].sum(axis=0).max(axis=0) >= SHOWS).mean()) for c in classes])


def missing_curves(probs: np.ndarray, classes: Sequence[Sequence[int]], below: float) -> int:
    """How many curves show in fewer than `below` of the columns (`style_support`)."""
    return int((style_support(probs, classes) < below).sum())


@dataclass(frozen=True)
class ScanReading:
    """One scan read, perhaps twice: the net's map at the first scale and the reading kept, on the scan's grid.

    Shape:
        raw: (C, h, w), the net's own channels on its grid at the first scale (the scan's when that is 1).
        reading rows, confidence: (K, W) on the scan's columns and in its rows.
    """

    raw: np.ndarray
    reading: TrackReading
    scale: tuple[float, float]  # net pixels per scan pixel of the reading kept
    missing: tuple[int, ...]  # named curves missing at each scale read, the first scale first; () without a sidecar


def read_scan(
    model: nn.Module, image: np.ndarray, calibration: Calibration | None, tile_width: int, tile_overlap: int,
    extract: ExtractParams, device: str = "cpu", scale: tuple[float, float] = (1.0, 1.0),
    max_height: int | None = None, rgb: np.ndarray | None = None,
) -> ScanReading:
    """Read a scan at `scale`, and again enlarged by `extract.enlarge.factor` where a named curve is missing.

    Args:
        model: VeerNet on `device`, in eval mode.
        image: the landscape scan.
        calibration: its sidecar; None reads the curves the map supports, once.
        tile_width, tile_overlap: inference tiling.
        extract: the reading's params (`extract.enlarge` among them).
        device: torch device of the model.
        scale: net pixels per scan pixel (`io.resolution.net_scale`); the enlargement multiplies it.
        max_height: tallest track the net reads (`infer.max_height`): an enlargement taller is not read.
        rgb: the scan in colour when it is a colour print (`io.tiff.decode_colour`), for the pens the sidecar names.

    Shape:
        image: (H, W) uint8; rgb: (H, W, 3) uint8.
    """
    raw, probs, reading = read_at(model, image, calibration, tile_width, tile_overlap, extract, device, scale, rgb)
    enlarge = extract.enlarge
    if calibration is None or probs.shape[0] != NUM_CLASSES:
        return ScanReading(raw, reading, scale, ())
    missing = missing_curves(probs, reading.plan.classes, enlarge.below)
    larger = (scale[0] * enlarge.factor, scale[1] * enlarge.factor)
    too_tall = max_height is not None and net_size(*image.shape, larger)[0] > max_height
    if missing == 0 or enlarge.factor <= 1.0 or too_tall:
        return ScanReading(raw, reading, scale, (missing,))
    _, probs_larger, reading_larger = read_at(model, image, calibration, tile_width, tile_overlap, extract, device,
                                              larger, rgb)
    missing_larger = missing_curves(probs_larger, reading_larger.plan.classes, enlarge.below)
    log.info("%d named curve(s) barely show at scale %.3g, %d enlarged %.3g times", missing, scale[0],
             missing_larger, enlarge.factor)
    kept = (reading_larger, larger) if missing_larger < missing else (reading, scale)
    return ScanReading(raw, *kept, (missing, missing_larger))


def read_at(model: nn.Module, image: np.ndarray, calibration: Calibration | None, tile_width: int,
            tile_overlap: int, extract: ExtractParams, device: str, scale: tuple[float, float],
            rgb: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, TrackReading]:
    """The net's map on its grid at `scale`, that map on the style classes, and the track read off it with
    rows on the scan's grid (a colour print's `rgb` resampled with it)."""
    resampled = scale != (1.0, 1.0)
    net_image = to_net_grid(image, scale) if resampled else image
    raw = predict_probs(model, net_image, tile_width, tile_overlap, device, mirror=extract.mirror)
    probs = as_style_probs(raw)
    net_rgb = to_net_grid(rgb, scale) if resampled and rgb is not None else rgb
    reading = read_track(probs, calibration, extract, net_rgb)
    if not resampled:
        return raw, probs, reading
    rows, confidence = to_scan_grid(reading.rows, reading.confidence, scale, image.shape[1])
    return raw, probs, TrackReading(reading.plan, rows, confidence)
