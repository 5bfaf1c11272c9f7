"""Curve and mask metrics, NaN-aware, in track units.

Curves are compared in track units (0 at the track's top edge, 1 at its bottom edge), the scale
the seeds report R^2 / MAE / MSE on, so a log track and a linear one weigh the same. A column
counts only where both truth and prediction exist; a column the extractor left empty is not an
error of zero but a miss, which `coverage` reports.

Mask metrics are pixel counts per class (one-vs-rest); `mask_counts` lets callers pool counts
over many logs before turning them into scores, so a small log does not weigh like a big one.
"""

from __future__ import annotations

import numpy as np

# A column read this far from the truth (track units; 2 % is 13 px on a 640-px track) is a misread:
# the path sat on the wrong ink or none, not a subpixel imprecision. R^2 is decided by these columns.
MISREAD_TRACK = 0.02


def curve_metrics(pred: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    """R^2, MAE, MSE and coverage of one predicted curve against its truth.

    Args:
        pred: predicted curve in track units, NaN where the extractor found nothing.
        truth: true curve in track units, NaN where there is no truth.

    Returns:
        `r2` = 1 - SS_res / SS_tot over columns where both exist (NaN with fewer than two such
        columns or a flat truth), `mae`, `mse` over the same columns (NaN when none),
        `coverage` = share of truth columns with a prediction (NaN without truth), `n` = number
        of compared columns, `pearson_abs` = |Pearson r| of prediction and truth over the same
        columns (NaN with fewer than two, or when either side is flat), `misread_share` = share of
        compared columns more than `MISREAD_TRACK` from the truth (NaN when none).

    Shape:
        pred, truth: (W,).
    """
    pred = np.asarray(pred, dtype=np.float64)
    truth = np.asarray(truth, dtype=np.float64)
    if pred.shape != truth.shape:
        raise ValueError(f"prediction shape {pred.shape} differs from truth shape {truth.shape}")
    has_truth = np.isfinite(truth)
    both = has_truth & np.isfinite(pred)
    n = int(both.sum())
    coverage = n / int(has_truth.sum()) if has_truth.any() else float("nan")
    if n == 0:
        return {"r2": float("nan"), "mae": float("nan"), "mse": float("nan"), "coverage": coverage, "n": 0,
                "pearson_abs": float("nan"), "misread_share": float("nan")}
    t, p = truth[both], pred[both]
    err = p - t
    ss_res = float(np.sum(err**2))
    ss_tot = float(np.sum((t - t.mean()) ** 2))
    r2 = 1.0 - ss_res / ss_tot if n >= 2 and ss_tot > 0 else float("nan")
    # A trace with the right shape at the wrong offset or scale still correlates: the figure the
    # classical-tracer literature reports (best-curve |r|), so results compare with it.
    ss_pred = float(np.sum((p - p.mean()) ** 2))
    cross = float(np.sum((p - p.mean()) * (t - t.mean())))
    pearson_abs = abs(cross) / np.sqrt(ss_pred * ss_tot) if n >= 2 and ss_pred > 0 and ss_tot > 0 else float("nan")
    return {"r2": r2, "mae": float(np.mean(np.abs(err))), "mse": float(np.mean(err**2)), "coverage": coverage, "n": n,
            "pearson_abs": float(pearson_abs), "misread_share": float(np.mean(np.abs(err) > MISREAD_TRACK))}


def mask_counts(pred_class: np.ndarray, true_class: np.ndarray, num_classes: int) -> np.ndarray:
    """True-positive, false-positive and false-negative pixel counts per class.

    Args:
        pred_class: predicted class per pixel.
        true_class: true class per pixel.
        num_classes: number of classes C (background included).

    Returns:
        Counts as int64, rows tp, fp, fn.

    Shape:
        pred_class, true_class: (H, W) integers in [0, C). Returns (3, C).
    """
    pred_class = np.asarray(pred_class).astype(np.int64).ravel()
    true_class = np.asarray(true_class).astype(np.int64).ravel()
    if pred_class.shape != true_class.shape:
        raise ValueError(f"predicted mask has {pred_class.size} pixels, true mask {true_class.size}")
    for name, values in (("predicted", pred_class), ("true", true_class)):
        if values.size and (values.min() < 0 or values.max() >= num_classes):
            raise ValueError(f"{name} mask holds class {values.max()} outside 0..{num_classes - 1}")
    joint = np.bincount(true_class * num_classes + pred_class, minlength=num_classes**2)
    confusion = joint.reshape(num_classes, num_classes)  # [true, pred]
    tp = np.diag(confusion)
    return np.stack([tp, confusion.sum(axis=0) - tp, confusion.sum(axis=1) - tp]).astype(np.int64)


def scores_from_counts(counts: np.ndarray) -> dict[int, dict[str, float]]:
    """IoU, F1, precision and recall per class from `mask_counts` (NaN where undefined).

    Shape:
        counts: (3, C) rows tp, fp, fn.
    """
    scores: dict[int, dict[str, float]] = {}
    for k, (tp, fp, fn) in enumerate(np.asarray(counts, dtype=np.float64).T):
        scores[k] = {
            "iou": _ratio(tp, tp + fp + fn),
            "f1": _ratio(2 * tp, 2 * tp + fp + fn),
            "precision": _ratio(tp, tp + fp),
            "recall": _ratio(tp, tp + fn),
        }
    return scores


def mask_metrics(pred_class: np.ndarray, true_class: np.ndarray, num_classes: int) -> dict[int, dict[str, float]]:
    """IoU, F1, precision and recall per class for one mask.

    Shape:
        pred_class, true_class: (H, W) integers in [0, num_classes).
    """
    return scores_from_counts(mask_counts(pred_class, true_class, num_classes))


def _ratio(num: float, den: float) -> float:
    return float(num / den) if den > 0 else float("nan")
