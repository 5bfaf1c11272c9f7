"""One track read from its class probabilities: the plan, the path search, and the seeds' thick vs thin.

`veernet digitize` and the evaluate stage read a track through `read_track`, so what is scored is
what an operator gets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veernet_pipeline.config import ExtractParams
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.reading.dashes import exchange_by_dashes
from veernet_pipeline.reading.extract import trace_curves
from veernet_pipeline.reading.pens import read_thick_thin
from veernet_pipeline.reading.spare_lines import read_on_spare_lines
from veernet_pipeline.reading.styles import ReadingPlan, plan_reading


@dataclass(frozen=True)
class TrackReading:
    """Every curve read off one track: the plan it was read by, rows and confidences.

    Shape:
        rows, confidence: (K, W), K = len(plan.classes); rows in pixels, NaN where absent.
    """

    plan: ReadingPlan
    rows: np.ndarray
    confidence: np.ndarray


def read_track(probs: np.ndarray, calibration: Calibration | None, params: ExtractParams,
               rgb: np.ndarray | None = None) -> TrackReading:
    """Read every curve the sidecar names (or the map supports) along the best paths.

    Args:
        probs: class probabilities on the style classes (`styles.as_style_probs`) or a binary map.
        calibration: the scan's sidecar, or None for track units.
        params: path-search knobs (params.yaml `extract:`).
        rgb: the scan in colour on the map's grid, when it is a colour print: curves whose sidecar entry names
            a `colour` are read on their pen's ink (`reading.colour`). None: by style alone.

    Shape:
        probs: (C, H, W), C in (2, 7); rgb: (H, W, 3) uint8.
    """
    plan = plan_reading(probs, calibration, params)
    rows, confidence = trace_curves(probs, params, plan.classes, rgb, plan.colours, plan.wraps)
    again = read_thick_thin(probs, plan, confidence, params, rgb)
    if again is not None:
        plan, rows, confidence = again
    # A curve named in a style the net did not see, read on a style that shows a line to spare.
    spare = read_on_spare_lines(probs, plan, confidence, params, rgb)
    if spare is not None:
        plan, rows, confidence = spare
    # Lines the net named in each other's styles for the whole log, given back by their dashes.
    exchanged = exchange_by_dashes(probs, plan, rows, confidence)
    return TrackReading(plan, rows, confidence) if exchanged is None else TrackReading(*exchanged)
