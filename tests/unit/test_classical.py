"""The classical tracer: grid suppression keeps curves, darkest-run tracking recovers them."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

from veernet_pipeline.config import Settings
from veernet_pipeline.evaluation.classical import classical_probs, ink_map, suppress_grid, trace_classical

H, W = 96, 600
LIGHT_GRAY, DARK_GRAY = 205, 60


def _draw_curve(image: np.ndarray, y: np.ndarray) -> np.ndarray:
    """A 2-px black pen along rows `y`, joined vertically between columns; returns the inked pixels."""
    top = np.rint(y).astype(int)
    ink = np.zeros(image.shape, dtype=bool)
    for x in range(W):
        lo = min(top[x], top[min(x + 1, W - 1)])
        hi = max(top[x], top[min(x + 1, W - 1)]) + 1
        ink[max(lo, 0):min(hi, H - 1) + 1, x] = True
    image[ink] = 0
    return ink


def _scan() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A grid of light and dark lines (one black, as on bilevel scans) and two crossing 2-px curves.

    Returns the scan, the two curves' true centre rows, the grid's pixels and the curves' pixels.
    """
    image = np.full((H, W), 255, dtype=np.uint8)
    image[:, 5::10] = LIGHT_GRAY  # minor depth lines
    image[:, 25::50] = DARK_GRAY  # major depth lines
    image[[12, 36, 60], :] = LIGHT_GRAY  # value divisions
    image[84, :] = 0  # a black value line
    image[[0, H - 1], :] = DARK_GRAY  # track borders
    grid = image < 255
    x = np.arange(W)
    truth_a = 40.0 + 22.0 * np.sin(x / 70.0)
    truth_b = 42.0 + 0.05 * (x - W / 2)
    curves = _draw_curve(image, truth_a) | _draw_curve(image, truth_b)
    # Truth rows in pixel-index space: a 2-px pen from round(y) has its centre at round(y) + 0.5.
    return image, np.rint(truth_a) + 0.5, np.rint(truth_b) + 0.5, grid, curves


def test_grid_suppression_removes_lines_and_keeps_curves() -> None:
    image, _, _, grid, curves = _scan()
    grid_only, curve_only = grid & ~curves, curves & ~grid
    ink = ink_map(image)
    assert ink[grid_only].max() > 0.7  # the dark and black lines were strong ink before
    clean = suppress_grid(ink)
    # Line pixels right beside a curve may be given back as the curve's crossing; all others go.
    away = grid_only & ~ndimage.binary_dilation(curves, iterations=2)
    assert away.sum() > 0.9 * grid_only.sum()
    assert clean[away].max() < 0.05
    assert clean[curve_only].min() > 0.95
    # Where a curve crosses a lighter line, it keeps its excess ink over the line.
    assert clean[np.rint(40.0 + 22.0 * np.sin(15 / 70.0)).astype(int), 15] > 0.1


def test_probs_are_a_binary_map_of_the_cleaned_ink() -> None:
    image, *_ = _scan()
    probs = classical_probs(image)
    assert probs.shape == (2, H, W) and probs.dtype == np.float32
    np.testing.assert_allclose(probs.sum(axis=0), 1.0, atol=1e-6)
    np.testing.assert_allclose(probs[1], suppress_grid(ink_map(image)), atol=1e-6)


@pytest.mark.parametrize("share_weight", [0.5, 4.0])
def test_tracer_recovers_both_curves_where_apart(test_settings: Settings, share_weight: float) -> None:
    image, truth_a, truth_b, _, _ = _scan()
    # The class-evidence weight tuned for a net must not matter: the tracer has no class evidence.
    extract = test_settings.extract.model_copy(update={"share_weight": share_weight})
    rows, confidence = trace_classical(image, extract)
    assert rows.shape == (2, W) and confidence.shape == (2, W)
    apart = np.abs(truth_a - truth_b) > 6
    # Between crossings the identity rests on continuity alone, so each apart stretch may be swapped.
    edges = np.flatnonzero(np.diff(apart.astype(int))) + 1
    stretches = [s for s in np.split(np.arange(W), edges) if apart[s[0]]]
    assert len(stretches) >= 3  # the curves do cross
    for cols in stretches:
        kept = max(np.abs(rows[0, cols] - truth_a[cols]).max(), np.abs(rows[1, cols] - truth_b[cols]).max())
        swapped = max(np.abs(rows[1, cols] - truth_a[cols]).max(), np.abs(rows[0, cols] - truth_b[cols]).max())
        assert min(kept, swapped) <= 1.5, f"columns {cols[0]}-{cols[-1]}: off by {min(kept, swapped):.2f} px"


@pytest.mark.parametrize(
    ("image", "match"),
    [
        (np.zeros((8, 8), dtype=np.float32), "uint8.*float32"),
        (np.zeros((2, 8, 8), dtype=np.uint8), r"2-D.*\(2, 8, 8\)"),
        (np.zeros((0, 8), dtype=np.uint8), "no pixels"),
    ],
)
def test_bad_images_are_refused_with_a_reason(image: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        classical_probs(image)


def test_suppress_grid_refuses_non_2d() -> None:
    with pytest.raises(ValueError, match=r"2-D \(H, W\) map"):
        suppress_grid(np.zeros((3, 4, 5)))
