"""Mask scores (`MaskScores`): hand-counted 3 x 4 masks, padding, absent classes, binary logits, pooling."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from veernet_pipeline.evaluation.metrics import MaskScores, predicted_classes

# Three classes on a 3 x 4 mask. Counted by hand, cell by cell (row, column):
#   class 0: true (0,0) (0,1) (1,0) (1,3) (2,2); predicted (0,0) (0,3) (1,0) (1,2) (1,3) (2,2)
#            tp 4 = (0,0) (1,0) (1,3) (2,2), fp 2 = (0,3) (1,2), fn 1 = (0,1)
#   class 1: true (0,2) (0,3) (2,0) (2,1); predicted (0,1) (0,2) (2,0)
#            tp 2 = (0,2) (2,0), fp 1 = (0,1), fn 2 = (0,3) (2,1)
#   class 2: true (1,1) (1,2) (2,3); predicted (1,1) (2,1) (2,3)
#            tp 2 = (1,1) (2,3), fp 1 = (2,1), fn 1 = (1,2)
TRUE = np.array([[0, 0, 1, 1], [0, 2, 2, 0], [1, 1, 0, 2]])
PRED = np.array([[0, 1, 1, 0], [0, 2, 0, 0], [1, 2, 0, 2]])
COUNTS = [[4, 2, 2], [2, 1, 1], [1, 2, 1]]  # rows tp, fp, fn; columns classes 0, 1, 2


def by_hand(tp: int, fp: int, fn: int) -> dict[str, float]:
    """The four scores from their definitions, NaN where the denominator is 0."""
    def ratio(num: int, den: int) -> float:
        return num / den if den else math.nan

    return {"iou": ratio(tp, tp + fp + fn), "f1": ratio(2 * tp, 2 * tp + fp + fn), "precision": ratio(tp, tp + fp),
            "recall": ratio(tp, tp + fn)}


def assert_scores(scores: dict[int, dict[str, float]], expected: dict[int, dict[str, float]]) -> None:
    assert scores.keys() == expected.keys()
    for k, values in expected.items():
        for name, value in values.items():
            got = scores[k][name]
            assert (math.isnan(got) and math.isnan(value)) or got == pytest.approx(value, rel=1e-12), (k, name, got)


def test_three_classes_match_hand_counts() -> None:
    scores = MaskScores(3)
    scores.update(PRED, TRUE)
    np.testing.assert_array_equal(scores.counts(), COUNTS)
    assert_scores(scores.compute(), {0: by_hand(4, 2, 1), 1: by_hand(2, 1, 2), 2: by_hand(2, 1, 1)})
    # The same figures written out: class 0 IoU 4/7, F1 8/11; class 1 IoU 2/5, recall 1/2; class 2 IoU 1/2.
    result = scores.compute()
    assert result[0]["iou"] == pytest.approx(4 / 7) and result[0]["f1"] == pytest.approx(8 / 11)
    assert result[1]["iou"] == pytest.approx(2 / 5) and result[1]["recall"] == pytest.approx(1 / 2)
    assert result[2]["iou"] == pytest.approx(1 / 2) and result[2]["precision"] == pytest.approx(2 / 3)


def test_padding_is_left_out() -> None:
    # The 3 x 4 masks padded to 5 x 6 with a prediction of class 2 and a truth of class 1 in the padding:
    # counted, the padding would add 18 false positives to class 2 and 18 false negatives to class 1.
    pred, true = np.full((5, 6), 2), np.full((5, 6), 1)
    pred[:3, :4], true[:3, :4] = PRED, TRUE
    valid = np.zeros((5, 6))
    valid[:3, :4] = 1.0
    padded = MaskScores(3)
    padded.update(torch.from_numpy(pred)[None], torch.from_numpy(true)[None], torch.from_numpy(valid)[None])
    np.testing.assert_array_equal(padded.counts(), COUNTS)
    unmasked = MaskScores(3)
    unmasked.update(pred, true)
    np.testing.assert_array_equal(unmasked.counts(), [[4, 2, 2], [2, 1, 19], [1, 20, 1]])


def test_a_class_absent_from_both_is_nan() -> None:
    scores = MaskScores(4)  # class 3 appears in neither mask
    scores.update(PRED, TRUE)
    result = scores.compute()
    assert all(math.isnan(value) for value in result[3].values())
    # Present in the truth but never predicted: precision undefined (NaN), the rest 0.
    never = MaskScores(3)
    never.update(np.zeros((1, 3)), np.array([[0, 2, 2]]))
    assert_scores({2: never.compute()[2]}, {2: by_hand(0, 0, 2)})
    assert math.isnan(never.compute()[2]["precision"]) and never.compute()[2]["recall"] == 0.0
    # Nothing pooled yet: every score is NaN.
    assert all(math.isnan(v) for per_class in MaskScores(2).compute().values() for v in per_class.values())


def test_one_logit_binary_scores_curve_against_background() -> None:
    # A binary net's logit map: curve where the logit is positive (0 itself is background). The truth holds
    # curve classes 1 and 2; a binary net is scored on curve vs background, so both count as curve.
    logits = torch.tensor([[[[2.0, -1.0, 0.0, 3.0], [-2.0, 0.5, -0.5, -4.0], [1.0, 1.0, -1.0, -3.0]]]])
    truth = torch.tensor([[[1, 0, 2, 2], [0, 0, 1, 0], [1, 0, 0, 0]]])
    pred = predicted_classes(logits)
    assert pred.tolist() == [[[1, 0, 0, 1], [0, 1, 0, 0], [1, 1, 0, 0]]]
    # curve: predicted (0,0) (0,3) (1,1) (2,0) (2,1); true (0,0) (0,2) (0,3) (1,2) (2,0)
    #        tp 3 = (0,0) (0,3) (2,0), fp 2 = (1,1) (2,1), fn 2 = (0,2) (1,2); background: tp 5, fp 2, fn 2.
    scores = MaskScores(2)
    scores.update(pred, truth)
    np.testing.assert_array_equal(scores.counts(), [[5, 3], [2, 2], [2, 2]])
    assert_scores(scores.compute(), {0: by_hand(5, 2, 2), 1: by_hand(3, 2, 2)})


def test_two_images_are_pooled_not_averaged() -> None:
    # Image a: one curve pixel, found (curve IoU 1). Image b: one curve pixel found and three false alarms
    # (curve IoU 1/4). Pooled: tp 2, fp 3, fn 0 -> IoU 2/5; the mean of the two images' IoUs would be 5/8.
    a_pred, a_true = np.array([[0, 1, 0, 0]]), np.array([[0, 1, 0, 0]])
    b_pred, b_true = np.array([[1, 1, 1, 1], [0, 0, 0, 0]]), np.array([[0, 1, 0, 0], [0, 0, 0, 0]])
    scores = MaskScores(2)
    scores.update(a_pred, a_true)
    scores.update(b_pred, b_true)
    assert scores.masks == 2
    np.testing.assert_array_equal(scores.counts(), [[7, 2], [0, 3], [3, 0]])
    assert scores.compute()[1]["iou"] == pytest.approx(2 / 5)
    assert scores.compute()[0] == pytest.approx(by_hand(7, 0, 3))


def test_masks_that_cannot_be_scored_are_refused() -> None:
    scores = MaskScores(3)
    with pytest.raises(ValueError, match="predicted mask holds class 3 outside 0..2"):
        scores.update(PRED + 1, TRUE)
    with pytest.raises(ValueError, match="true mask holds class -1"):
        scores.update(PRED, TRUE - 1)
    with pytest.raises(ValueError, match=r"predicted mask \(3, 4\) differs from true mask \(4, 3\)"):
        scores.update(PRED, TRUE.T)
    with pytest.raises(ValueError, match="pad_collate"):
        scores.update(PRED, TRUE, np.ones((3, 5)))
    with pytest.raises(ValueError, match="num_classes >= 2"):
        MaskScores(1)
    assert scores.masks == 0
