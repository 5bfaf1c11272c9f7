"""Per-scan confidence figures, against numbers worked out by hand."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from veernet_pipeline.io.las import LasCurve, read_curves, write_las
from veernet_pipeline.reading.confidence import confidence_figures, curves_figures

NAN = float("nan")
# Two curves over ten columns. Curve A is not read in its last two columns (NULL, confidence 0);
# curve B is read everywhere, its last column bridged across a gap at low confidence.
VALUES = np.array([[1, 2, 3, 4, 5, 6, 7, 8, NAN, NAN],
                   [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]], dtype=float)
CONF = np.array([[0.9, 0.9, 0.9, 0.8, 0.8, 0.4, 0.3, 0.2, 0.0, 0.0],
                 [0.9, 0.9, 0.9, 0.9, 0.7, 0.7, 0.6, 0.5, 0.45, 0.1]])
# By hand, the 20 confidences sorted: 0, 0, 0.1, 0.2, 0.3, 0.4, 0.45, 0.5, 0.6, 0.7, 0.7, 0.8, 0.8, 0.9 x 7.
# Median: the 10th and 11th are both 0.7. 10th percentile, linear between order statistics (numpy's
# default, Hyndman-Fan type 7): position 0.1 x 19 = 1.9 (0-based) -> 0 + 0.9 x (0.1 - 0) = 0.09.
# NULL: 2 of 20. Read but below 0.5: A's 0.4, 0.3, 0.2 and B's 0.45, 0.1 -> 5 of 20.
EXPECTED = {"conf_median": 0.7, "conf_p10": 0.09, "null_share": 0.1, "low_conf_share": 0.25}


def test_figures_of_a_hand_built_confidence_array() -> None:
    assert confidence_figures(VALUES, CONF, 0.5) == pytest.approx(EXPECTED)
    # The threshold moves only low_conf_share: below 0.35, A's 0.3 and 0.2 and B's 0.1 remain (3 of 20).
    assert confidence_figures(VALUES, CONF, 0.35)["low_conf_share"] == pytest.approx(0.15)


def test_figures_of_a_hand_built_las(tmp_path: Path) -> None:
    las = tmp_path / "scan.las"
    curves = [LasCurve("GR", "GAPI", VALUES[0]), LasCurve("GR_CONF", "", CONF[0]),
              LasCurve("NPHI", "V/V", VALUES[1]), LasCurve("NPHI_CONF", "", CONF[1]),
              LasCurve("CALI", "IN", np.full(10, NAN))]  # no _CONF companion: not a digitised curve
    write_las(las, np.arange(10.0), "FT", curves, {}, [])
    assert curves_figures(read_curves(las)[1], 0.5) == pytest.approx(EXPECTED)


def test_a_scan_without_curves_has_no_figures() -> None:
    assert all(math.isnan(v) for v in curves_figures({"CALI": np.ones(3)}, 0.5).values())
    with pytest.raises(ValueError, match="same shape"):
        confidence_figures(VALUES, CONF[:1], 0.5)
