"""Curve and mask metrics, NaN-aware, in track units.

Curves are compared in track units (0 at the track's top edge, 1 at its bottom edge), the scale
the seeds report R^2 / MAE / MSE on, so a log track and a linear one weigh the same. A column
counts only where both truth and prediction exist; a column the extractor left empty is not an
error of zero but a miss, which `coverage` reports. These stay our own code: torchmetrics'
R2Score and MeanAbsoluteError return NaN as soon as one column is missing on either side, R2Score
raises below two columns where we report NaN, and none of them has coverage or misreads; a caller
would still select the columns both sides hold before every call, which is most of
`curve_metrics` (docs/libraries.md).

Mask metrics are pixel counts per class (one-vs-rest), pooled over many logs or batches by
`MaskScores` before they become scores, so a small log does not weigh like a big one. Training's
validation IoU and the evaluate stage's class scores both come from it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

# A column read this far from the truth (track units; 2 % is 13 px on a 640-px track) is a misread:
# the path sat on the wrong ink or none, not a subpixel imprecision. R^2 is decided by these columns.
MISREAD_TRACK = 0.02


def curve_metrics(pred: np.ndarray, truth: np.ndarray,
                  band: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, float]:
    """R^2, MAE, MSE and coverage of one predicted curve against its truth.

    Args:
        pred: predicted curve in track units, NaN where the extractor found nothing.
        truth: true curve in track units, NaN where there is no truth.
        band: (lo, hi), what the true curve sweeps over each column's depth extent
            (`truth.truth_band`); a prediction inside it is exact, outside it is scored against
            its nearer end. None = the truth itself (a band of zero width).

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
    if band is not None:
        t = np.clip(p, np.asarray(band[0], dtype=np.float64)[both], np.asarray(band[1], dtype=np.float64)[both])
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


# The class padding pixels get before counting: torchmetrics' ignore_index leaves them out of every count.
IGNORE_CLASS = -1


def predicted_classes(logits: torch.Tensor) -> torch.Tensor:
    """Class per pixel from a net's logits.

    One logit map is the binary net: curve (1) where the logit is positive, i.e. sigmoid > 0.5;
    otherwise the most likely class.

    Shape:
        logits: (B, C, H, W). Returns (B, H, W) int64.
    """
    return (logits[:, 0] > 0).long() if logits.shape[1] == 1 else logits.argmax(dim=1)


class MaskScores:
    """IoU, F1, precision and recall per class from pixel counts pooled over many masks.

    torchmetrics' `MulticlassStatScores(average=None, multidim_average="global")` counts true
    positives, false positives and false negatives per class and adds them up over every `update`,
    so the scores are those of all pixels together (pooled), not a mean of per-image scores.
    Padding (valid == 0) gets class `IGNORE_CLASS`, its `ignore_index`, and counts nowhere.

    Two parts stay ours, each for a measured reason (docs/libraries.md): the range check, because
    torchmetrics' own `validate_args` only compares the number of distinct values with C and counts
    a predicted class >= C silently into the wrong cells; and the ratios (`scores_from_counts`),
    because its F1, precision and recall accept only 0 or 1 for a zero division, where a class absent
    from both prediction and truth must be NaN (null in metrics.json), not a perfect or a failed score.

    Args:
        num_classes: C, background included. 2 = a one-logit binary net: its truth is scored as
            curve (any class > 0) vs background, whatever the set labels its curves.
    """

    def __init__(self, num_classes: int) -> None:
        if num_classes < 2:
            raise ValueError(f"MaskScores needs num_classes >= 2 (background and curve), got {num_classes}; "
                             "a one-logit binary net has 2")
        self.num_classes = num_classes
        self.masks = 0
        # Imported here, not with this module: torchmetrics loads scipy.signal and matplotlib on import, over a
        # second that the curve metrics' users (the classical tracer, the benchmarks) need not pay.
        from torchmetrics.classification import MulticlassStatScores

        # Our range check runs first, so torchmetrics' slower and weaker validation is left off.
        self._stats = MulticlassStatScores(num_classes, average=None, multidim_average="global",
                                           ignore_index=IGNORE_CLASS, validate_args=False)

    def update(self, pred_class: Any, true_class: Any, valid: Any = None) -> None:
        """Add the pixels of one mask or one batch of masks.

        Args:
            pred_class: predicted class per pixel, in [0, C) (`predicted_classes` of logits, or
                the argmax of probabilities).
            true_class: true class per pixel, in [0, C); with C = 2 any class > 0 is curve.
            valid: > 0 on real pixels, 0 on padding (None = every pixel is real).

        Shape:
            pred_class, true_class, valid: one shape, e.g. (H, W) or (B, H, W); numpy arrays or tensors.
        """
        pred, true = torch.as_tensor(pred_class).long(), torch.as_tensor(true_class).long()
        if pred.shape != true.shape:
            raise ValueError(f"predicted mask {tuple(pred.shape)} differs from true mask {tuple(true.shape)}; "
                             "pass the prediction and the truth of the same pixels")
        if self.num_classes == 2:
            true = (true > 0).long()
        for name, values in (("predicted", pred), ("true", true)):
            outside = values[(values < 0) | (values >= self.num_classes)]
            if outside.numel():
                raise ValueError(f"{name} mask holds class {int(outside[0])} outside 0..{self.num_classes - 1}; "
                                 f"build MaskScores with the model's class count or remap the mask")
        if valid is not None:
            keep = torch.as_tensor(valid).to(true.device) > 0
            if keep.shape != true.shape:
                raise ValueError(f"valid {tuple(keep.shape)} differs from the masks {tuple(true.shape)}; "
                                 "pass the `valid` tensor that pad_collate returns")
            true = torch.where(keep, true, IGNORE_CLASS)
        if self._stats.device != pred.device:
            self._stats.to(pred.device)
        self._stats.update(pred.reshape(1, -1), true.to(pred.device).reshape(1, -1))
        self.masks += 1

    def counts(self) -> np.ndarray:
        """Pooled counts so far as int64, rows tp, fp, fn (all 0 before any `update`).

        Shape:
            Returns (3, C).
        """
        if not self.masks:
            return np.zeros((3, self.num_classes), dtype=np.int64)
        # average=None gives one row per class: tp, fp, tn, fn, support.
        tp, fp, _, fn, _ = self._stats.compute().T
        return torch.stack([tp, fp, fn]).cpu().numpy().astype(np.int64)

    def compute(self) -> dict[int, dict[str, float]]:
        """IoU, F1, precision and recall per class of the pooled counts (NaN where undefined)."""
        return scores_from_counts(self.counts())


def scores_from_counts(counts: np.ndarray) -> dict[int, dict[str, float]]:
    """IoU, F1, precision and recall per class from pooled counts (NaN where undefined).

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


def _ratio(num: float, den: float) -> float:
    return float(num / den) if den > 0 else float("nan")
