"""A scan read again enlarged where a curve its sidecar names barely shows (reading/enlarge.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.nets import DashIsLong
from veernet_pipeline.config import EnlargeParams, ExtractParams, Settings
from veernet_pipeline.inference.digitize import digitize_scan
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.classes import NUM_CLASSES, style_class
from veernet_pipeline.reading.enlarge import missing_curves, style_support

DASHED, DOTTED = style_class("dashed"), style_class("dotted")
SIDECAR = Calibration.from_dict({"depth": {"top": 0.0, "bottom": 100.0, "unit": "M"},
                                 "curves": [{"mnemonic": "RT", "top_value": 0, "bottom_value": 10, "style": "dashed"}]})
LINE = 30  # rows 29-31 hold the dashes: the line's centre is row 30


def _dashes(ink: int, gap: int, width: int = 300, height: int = 60) -> np.ndarray:
    """A 3-px thick horizontal line of `ink`-column dashes and `gap`-column gaps on white paper."""
    image = np.full((height, width), 255, dtype=np.uint8)
    dark = (np.arange(width) % (ink + gap)) < ink
    image[LINE - 1:LINE + 2, dark] = 0
    return image


def _extract(settings: Settings, factor: float = 1.5) -> ExtractParams:
    return settings.extract.model_copy(update={"enlarge": EnlargeParams(factor=factor, below=0.25)})


def test_style_support_counts_columns_where_a_curves_classes_reach_one_half() -> None:
    probs = np.zeros((NUM_CLASSES, 4, 10), dtype=np.float32)
    probs[DASHED, 1, [0, 3, 7]] = 0.6  # 3 of 10 columns
    probs[DOTTED, 2, [1, 2]] = 0.5  # 2 of 10: exactly one half counts
    probs[DOTTED, 0, 5] = 0.49  # below one half on its own ...
    probs[DASHED, 0, 5] = 0.02  # ... but a curve of either class sums them: 0.51 in column 5
    np.testing.assert_allclose(style_support(probs, [(DASHED,), (DOTTED,), (DASHED, DOTTED)]), [0.3, 0.2, 0.6])
    assert missing_curves(probs, [(DASHED,), (DOTTED,)], below=0.25) == 1  # the dotted curve, 0.2 < 0.25
    assert missing_curves(probs, [(DASHED,), (DOTTED,)], below=0.2) == 0


def test_dashes_shorter_than_the_net_learnt_are_read_enlarged(test_settings: Settings) -> None:
    # The net calls runs of 8 columns or more dashed. Dashes of 6 show as dotted: the named dashed curve
    # is missing (no column shows it); enlarged 1.5x they are 9 columns long and read as dashed.
    image = _dashes(6, 6)
    result = digitize_scan(DashIsLong(8).eval(), image, SIDECAR, 128, 32, _extract(test_settings))
    read = np.isfinite(result.rows[0])
    assert read.mean() > 0.9  # gaps of 6 (9 enlarged) are bridged
    np.testing.assert_allclose(result.rows[0][read], LINE, atol=1.0)  # rows back on the scan's own grid
    assert result.rows.shape == (1, 300) and len(result.depth) == 300
    assert any("read enlarged 1.5 times (extract.enlarge): 1 named curve(s) barely showed" in n for n in result.notes)
    # Off (factor 1): the curve finds no ink of its style at all, so it is read on the one dotted line the map shows
    # (reading.spare_lines), and the LAS names both what was done and the remedy.
    off = digitize_scan(DashIsLong(8).eval(), image, SIDECAR, 128, 32, _extract(test_settings, factor=1.0))
    np.testing.assert_allclose(off.rows[0][np.isfinite(off.rows[0])], LINE, atol=1.0)
    assert any("found almost no ink of its style" in n and "a dotted line more" in n for n in off.notes)
    assert [n for n in off.notes if "barely showed" in n] == [
        "1 named curve(s) barely showed (their style in under 25% of the columns): where the print's dashes are "
        "shorter than the net learnt them, extract.enlarge.factor 1.5 reads such scans enlarged (docs/reading.md)"]


def test_a_scan_whose_named_curves_show_is_read_once_and_a_useless_enlargement_is_not_kept(
        test_settings: Settings) -> None:
    extract = _extract(test_settings)
    shown = digitize_scan(DashIsLong(8).eval(), _dashes(12, 6), SIDECAR, 128, 32, extract)
    np.testing.assert_allclose(shown.rows[0][np.isfinite(shown.rows[0])], LINE, atol=1.0)
    assert not any("barely showed" in n or "enlarged" in n for n in shown.notes)
    # Dashes of 3 are 4-5 columns enlarged: still dotted to this net, so the first reading (on the dotted line) stays.
    short = digitize_scan(DashIsLong(8).eval(), _dashes(3, 6), SIDECAR, 128, 32, extract)
    np.testing.assert_allclose(short.rows[0][np.isfinite(short.rows[0])], LINE, atol=1.0)
    assert any("a dotted line more" in n for n in short.notes)
    assert any("enlarged 1.5 times no fewer did, so the scan's size was kept" in n for n in short.notes)


def test_an_enlargement_taller_than_max_height_is_not_read(test_settings: Settings) -> None:
    # 60 rows enlarged 1.5x are 90: above a max_height of 80 the scan is read at its own size only.
    result = digitize_scan(DashIsLong(8).eval(), _dashes(6, 6), SIDECAR, 128, 32, _extract(test_settings),
                           max_height=80)
    assert any("a dotted line more" in n for n in result.notes)  # read at its own size, on the dotted line
    assert any("enlarged 1.5 times the track would be taller than infer.max_height" in n for n in result.notes)


def test_an_enlargement_factor_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="factor"):
        EnlargeParams(factor=0.5, below=0.25)
