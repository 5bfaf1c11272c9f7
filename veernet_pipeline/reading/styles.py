"""Line-style class probabilities -> one probability map per curve the calibration asks for.

The multiclass net says which line style each pixel's ink is in (`io.classes`); the path search
(`extract.trace_curves`) reads curves, channel 0 being "no curve asked for". This module is the
bridge: curve k's map is the sum of the classes its style allows (`io.classes.curve_classes`),
and channel 0 gets everything else: background, other ink, and ink in styles no curve asks for.
A class two curves may both be in (two curves of one style, or curves past the second without a
named style) is split evenly between them, so the channels still sum to 1 at every pixel.

`trace_curves` follows at most `MAX_CURVES` curves today; further curves the sidecar names are
not read (issue 11 item 1 extends the joint search to K curves).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from veernet_pipeline.io.classes import NUM_CLASSES, curve_classes

MAX_CURVES = 2  # curves the joint path search follows at once


def curve_probs(probs: np.ndarray, styles: Sequence[str | None]) -> np.ndarray:
    """Per-curve probabilities for the path search from the net's class probabilities.

    Args:
        probs: the net's softmax (or a binary net's [background, curve] pair, returned unchanged).
        styles: each curve's style as the calibration names it, None where it names none; only
            the first `MAX_CURVES` are read.

    Returns:
        float32 maps: channel 0 = no curve asked for, channel k = curve k (k = 1..K).

    Raises:
        ValueError: `probs` has neither 2 nor `NUM_CLASSES` channels, or `styles` is empty.

    Shape:
        probs: (C, H, W) -> (1 + K, H, W), K = min(len(styles), MAX_CURVES).
    """
    if probs.ndim != 3 or probs.shape[0] not in (2, NUM_CLASSES):
        raise ValueError(f"class probabilities must be (C, H, W) with C = 2 (binary net) or {NUM_CLASSES} "
                         f"(io.classes), got {probs.shape}; load a model this version trained")
    if probs.shape[0] == 2:
        return probs
    if not styles:
        raise ValueError("no curve to read: the calibration names no curves")
    allowed = curve_classes(list(styles))[:MAX_CURVES]
    claims = np.zeros(NUM_CLASSES)
    for classes in allowed:
        claims[list(classes)] += 1.0
    curves = np.stack([sum(probs[c] / claims[c] for c in classes) for classes in allowed]).astype(np.float32)
    return np.concatenate([np.clip(1.0 - curves.sum(axis=0), 0.0, 1.0)[None], curves])
