"""Per-scan confidence figures: what the review queue ranks scans by.

Each digitised curve `MNEM` has a `MNEM_CONF` companion (class share x ink probability on the
path, divided by the number of curves reading the same run; 0 where the curve was absent or
bridged). One scan's figures pool every column of every
curve it holds (K curves x W columns = N entries):

- `conf_median`, `conf_p10`: median and 10th percentile of the `_CONF` values (numpy's linear
  interpolation between order statistics), absent columns counted as 0;
- `null_share`: share of the N entries whose value is NULL (the curve was not read there);
- `low_conf_share`: share of the N entries whose value was read but whose confidence is below
  `infer.low_confidence` (bridged gaps, faint or contested ink).

So `null_share + low_conf_share` is the share of the scan a reviewer should not trust blindly.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

CONF_SUFFIX = "_CONF"
FIGURES = ("conf_median", "conf_p10", "null_share", "low_conf_share")
# Beside them in the index: how many of a scan's curves are drawn alike with another (`digitize.alike_count`), whose
# identities its confidence does not vouch for; the review queue ranks such scans first.
ALIKE = "alike_curves"
# And how many took another line than the net named by the length of its dashes (`digitize.exchanged_count`): their
# identity rests on that rule, not on the net; ranked first with them.
EXCHANGED = "exchanged_curves"


def confidence_figures(values: np.ndarray, confidence: np.ndarray, threshold: float) -> dict[str, float]:
    """The four figures of one scan from its value and confidence curves.

    Args:
        values: each curve's values, NaN where it was not read.
        confidence: each curve's confidence, 0..1.
        threshold: a read value with confidence below this counts as low-confidence.

    Returns:
        `conf_median`, `conf_p10`, `null_share`, `low_conf_share`; all NaN for a scan with no curve.

    Shape:
        values, confidence: (K, W), K curves over W columns.
    """
    values = np.asarray(values, dtype=np.float64)
    confidence = np.asarray(confidence, dtype=np.float64)
    if values.shape != confidence.shape:
        raise ValueError(f"values {values.shape} and confidence {confidence.shape} must have the same shape")
    if values.size == 0:
        return dict.fromkeys(FIGURES, float("nan"))
    null = np.isnan(values)
    return {
        "conf_median": float(np.median(confidence)),
        "conf_p10": float(np.percentile(confidence, 10)),
        "null_share": float(null.mean()),
        "low_conf_share": float((~null & (confidence < threshold)).mean()),
    }


def curves_figures(curves: Mapping[str, np.ndarray], threshold: float) -> dict[str, float]:
    """`confidence_figures` of LAS curves by mnemonic: each `MNEM` paired with its `MNEM_CONF`.

    Shape:
        each curve: (W,).
    """
    names = [name for name in curves if not name.endswith(CONF_SUFFIX) and f"{name}{CONF_SUFFIX}" in curves]
    if not names:
        return confidence_figures(np.empty((0, 0)), np.empty((0, 0)), threshold)
    return confidence_figures(np.stack([curves[n] for n in names]),
                              np.stack([curves[f"{n}{CONF_SUFFIX}"] for n in names]), threshold)
