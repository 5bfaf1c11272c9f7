"""Scans at another resolution: read on the grid the net was trained on, report on the scan's own.

The net learnt its strokes at one scale: pens of 1-4 px, dashes of 5-90 px, grids at 200 dpi
(`synthetic`). It names a broken style partly by its absolute dash length (docs/accuracy.md), so a
log scanned at 300 dpi, whose dashes and pens are half as long again, reads far worse as it is
(`benchmarks/resolution.py`). A scan whose TIFF states its resolution (`io.tiff.TiffHeader.dpi`), or one
stating none in an archive with `infer.untagged_dpi`, is therefore resampled to `infer.net_dpi` along
each axis before the net sees it (a fax page of 204 x 98 dpi gets each axis its own factor), read there,
and its rows and confidences are brought back to the scan's own columns and rows, so depths, sidecars,
page layouts and QC pictures keep speaking of the scan's pixels. Which scans are resampled, and by how
much, is `io.resolution.net_scale`'s rule (ingest holds sizes to the `validate:` bounds on the same grid).
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from veernet_pipeline.io.resolution import net_size


def to_net_grid(image: np.ndarray, scale: tuple[float, float]) -> np.ndarray:
    """The scan resampled by `scale`: an area mean where it shrinks (a 1-bit scan becomes gray, as a gray
    scan of that resolution would be), bilinear where it grows.

    Shape:
        image: (H, W) uint8, or (H, W, 3) for a colour print. Returns (round(H * scale[0]), round(W * scale[1]))
        uint8 (with its 3 channels), each side at least 1.
    """
    height, width = net_size(*image.shape[:2], scale)
    shrinks = height * width < image.shape[0] * image.shape[1]
    return np.asarray(Image.fromarray(image).resize((width, height), Image.BOX if shrinks else Image.BILINEAR))


def to_scan_grid(rows: np.ndarray, confidence: np.ndarray, scale: tuple[float, float],
                 width: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows and confidences read on the net's grid, at each of the scan's columns and in the scan's rows.

    A scan column takes the straight line between the two net columns around its centre, or the
    nearer one where either is absent (NaN); a row r of the net's grid is row (r + 0.5) / scale - 0.5
    of the scan's (pixel centres match).

    Shape:
        rows, confidence: (K, w), w the net grid's width. Returns two (K, `width`) arrays.
    """
    n_curves, net_width = rows.shape
    position = (np.arange(width) + 0.5) * (net_width / width) - 0.5  # scan column centres on the net's grid
    left = np.clip(np.floor(position).astype(np.int64), 0, net_width - 1)
    right = np.clip(left + 1, 0, net_width - 1)
    frac = np.clip(position - left, 0.0, 1.0)
    nearer = np.where(frac < 0.5, left, right)
    out_rows, out_conf = np.empty((n_curves, width)), np.empty((n_curves, width))
    for k in range(n_curves):
        line = rows[k, left] + frac * (rows[k, right] - rows[k, left])
        out_rows[k] = np.where(np.isfinite(line), line, rows[k, nearer])
        out_conf[k] = np.where(np.isfinite(line), confidence[k, left] + frac * (confidence[k, right]
                                                                                - confidence[k, left]),
                               confidence[k, nearer])
    return (out_rows + 0.5) / scale[0] - 0.5, out_conf
