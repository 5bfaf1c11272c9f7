"""The canvas a track strip is drawn on: its ink, its mask classes and which curve owns each pixel.

Every drawing step writes ink and labels together, so a label always sits on the ink it names:

- the grid writes ink only (class 0, background: the printed grid is paper to a reader);
- other ink (text, header boxes, banners, flags, hatching) labels `OTHER_INK` where its coverage is
  at least half a pixel (`LABEL_COVERAGE`) and records any coverage in `other`, so that a bilevel
  threshold that blackens a lighter edge pixel can label it too;
- a curve labels its style's class and its index in `curves` (k + 1 for sidecar curve k) at every
  pixel it inks, over whatever was there: a curve drawn later owns a pixel it shares with an
  earlier one (`styles.draw_order`). Under a solid flag (`hide`) its ink does not show, so those
  pixels stay `OTHER_INK` and belong to no curve;
- `blank` (white backings, header boxes, banners) removes ink and labels alike.
"""

from __future__ import annotations

import numpy as np

from veernet_pipeline.io.classes import BACKGROUND, OTHER_INK

# Other ink is labelled where it covers at least this share of a pixel.
LABEL_COVERAGE = 0.5


class Canvas:
    """Ink and labels of one strip.

    Shape:
        ink, mask, curves, other, hidden: (H, W). ink uint8 (255 = no ink); mask uint8 classes of
        `io.classes`; curves uint8 (0 = no curve, k + 1 = sidecar curve k owns the pixel); other
        bool (some other ink covers the pixel); hidden bool (a solid flag hides curves there).
    """

    def __init__(self, height: int, width: int) -> None:
        self.ink = np.full((height, width), 255, dtype=np.uint8)
        self.mask = np.zeros((height, width), dtype=np.uint8)
        self.curves = np.zeros((height, width), dtype=np.uint8)
        self.other = np.zeros((height, width), dtype=bool)
        self.hidden = np.zeros((height, width), dtype=bool)
        self._any_hidden = False

    @property
    def shape(self) -> tuple[int, int]:
        return self.ink.shape

    def print_other(self, ys: np.ndarray | tuple[slice, slice], xs: np.ndarray | None, gray: float,
                    cover: np.ndarray | None = None) -> None:
        """Print other ink at gray level `gray` with coverage `cover` (0..1, default full).

        Args:
            ys, xs: pixel indices, or a (rows, columns) pair of slices in `ys` with `xs` None.
            gray: the ink's gray level at full coverage.
            cover: coverage per pixel, shaped like the indexed pixels.
        """
        where = ys if xs is None else (ys, xs)
        cover = np.ones(self.ink[where].shape, dtype=np.float32) if cover is None else cover
        printed = np.rint(255.0 - cover * (255.0 - gray)).astype(np.uint8)
        self.ink[where] = np.minimum(self.ink[where], printed)
        labelled = cover >= LABEL_COVERAGE
        mask, owner = self.mask[where], self.curves[where]
        mask[labelled], owner[labelled] = OTHER_INK, 0
        self.mask[where], self.curves[where] = mask, owner
        self.other[where] |= cover > 0

    def hide(self, ys: np.ndarray, xs: np.ndarray) -> None:
        """Mark pixels under a solid flag: curves drawn there later do not show."""
        self.hidden[ys, xs] = True
        self._any_hidden = True

    def blank(self, ys: np.ndarray | tuple[slice, slice], xs: np.ndarray | None) -> None:
        """Remove ink and every label from pixels (indices, or slices in `ys` with `xs` None)."""
        where = ys if xs is None else (ys, xs)
        self.ink[where] = 255
        self.mask[where] = BACKGROUND
        self.curves[where] = 0
        self.other[where] = False
        self.hidden[where] = False

    def draw_curve(self, k: int, cls: int, ys: np.ndarray, xs: np.ndarray, grays: np.ndarray) -> None:
        """Ink curve `k` (sidecar index) in class `cls`; it owns every pixel it inks that no solid flag hides."""
        # Flat indices: one index computation for the four layers (a curve inks up to ~10^5 pixels).
        flat = ys * self.ink.shape[1] + xs
        ink = self.ink.reshape(-1)
        ink[flat] = np.minimum(ink[flat], grays.astype(np.uint8))
        if self._any_hidden:
            hidden = self.hidden.reshape(-1)[flat]
            self.mask.reshape(-1)[flat] = np.where(hidden, OTHER_INK, cls)
            self.curves.reshape(-1)[flat] = np.where(hidden, 0, k + 1)
        else:
            self.mask.reshape(-1)[flat] = cls
            self.curves.reshape(-1)[flat] = k + 1

    def clear_outside(self, top: np.ndarray) -> None:
        """Blank the image rows a skewed track leaves uncovered (above its top or below its bottom edge)."""
        height = self.ink.shape[0]
        above, below = min(int(top.max()), height), min(int(-top.min()), height)
        # Only the first `above` and last `below` rows can lie outside the track.
        if above > 0:
            ys, xs = np.nonzero(np.arange(above)[:, None] < top[None, :])
            self.blank(ys, xs)
        if below > 0:
            ys, xs = np.nonzero(np.arange(height - below, height)[:, None] >= (top + height)[None, :])
            self.blank(ys + height - below, xs)

    def label_threshold(self, gray: np.ndarray) -> None:
        """After a bilevel threshold: no label on white, and other ink labels the black pixels it covers.

        Shape:
            gray: (H, W) uint8, values 0 and 255.
        """
        # Labels and other ink cover a few percent of the image: work on their pixels only.
        gray, mask, curves = gray.reshape(-1), self.mask.reshape(-1), self.curves.reshape(-1)
        labelled = np.flatnonzero(mask)
        white = labelled[gray[labelled] > 0]
        mask[white], curves[white] = BACKGROUND, 0
        covered = np.flatnonzero(self.other)
        mask[covered[(gray[covered] == 0) & (mask[covered] == BACKGROUND)]] = OTHER_INK
