"""The five training losses: masked padding, ordering of good and bad predictions, build_loss by name."""

from __future__ import annotations

import pytest
import torch

from veernet_pipeline.config import LossParams
from veernet_pipeline.model.veernet import cell_rows
from veernet_pipeline.training.losses import LOSSES, build_loss
from veernet_pipeline.training.losses._inputs import overlap_sums

MODES = [("binary", 1), ("multiclass", 3)]
CASES = [(name, mode, channels) for name in LOSSES for mode, channels in MODES]


def make_loss(name: str, mode: str) -> torch.nn.Module:
    # Non-default gamma and smoothing so the optional LossParams fields are exercised too.
    return build_loss(LossParams(name=name, gamma=1.5, smoothing=0.1), mode)


def confident_logits(target: torch.Tensor, channels: int, scale: float = 10.0) -> torch.Tensor:
    """Logits that put (almost) all probability on `target`'s class."""
    if channels == 1:
        return ((target > 0).double() * 2 - 1)[:, None] * scale
    return torch.nn.functional.one_hot(target, channels).permute(0, 3, 1, 2).double() * 2 * scale - scale


def curve_target(channels: int, shift: int = 0) -> torch.Tensor:
    """Two thin horizontal curves on background (one curve, class 1, in binary mode)."""
    target = torch.zeros(2, 32, 48, dtype=torch.long)
    target[:, 8 + shift, :] = 1
    target[:, 20 + shift, ::2] = 2 if channels > 1 else 1
    return target


@pytest.mark.parametrize(("name", "mode", "channels"), CASES)
def test_padding_adds_no_loss_and_no_gradient(name: str, mode: str, channels: int) -> None:
    gen = torch.Generator().manual_seed(11)
    small = torch.randn(2, channels, 24, 40, generator=gen, dtype=torch.float64, requires_grad=True)
    small_target = torch.randint(0, max(2, channels), (2, 24, 40), generator=gen)
    # Padding filled with large logits and a non-background target: only the mask may keep it out.
    big = (torch.randn(2, channels, 32, 64, generator=gen, dtype=torch.float64) * 5).detach()
    big[:, :, :24, :40] = small.detach()
    big.requires_grad_(True)
    big_target = torch.randint(1, max(2, channels), (2, 32, 64), generator=gen)
    big_target[:, :24, :40] = small_target
    valid = torch.zeros(2, 32, 64, dtype=torch.float64)
    valid[:, :24, :40] = 1.0
    loss_fn = make_loss(name, mode)
    loss_small, loss_big = loss_fn(small, small_target), loss_fn(big, big_target, valid)
    loss_small.backward()
    loss_big.backward()
    torch.testing.assert_close(loss_big, loss_small, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(big.grad[:, :, :24, :40], small.grad, rtol=1e-10, atol=1e-14)
    assert bool((big.grad[:, :, 24:] == 0).all()) and bool((big.grad[:, :, :, 40:] == 0).all())


@pytest.mark.parametrize(("name", "mode", "channels"), CASES)
def test_pixels_in_cell_order_give_the_same_loss_and_gradient(name: str, mode: str, channels: int) -> None:
    """Training hands the losses each image's pixels in `cell_rows` order (`train_one_epoch(by_cell=True)`):
    every loss must be the one of the image's own order, with each pixel's gradient, padding included."""
    gen = torch.Generator().manual_seed(12)
    logits = torch.randn(2, channels, 32, 48, generator=gen, dtype=torch.float64, requires_grad=True)
    target = torch.randint(0, max(2, channels), (2, 32, 48), generator=gen)
    valid = torch.ones(2, 32, 48, dtype=torch.float64)
    valid[1, 24:] = 0.0
    by_cell = torch.stack([cell_rows(logits[:, k]) for k in range(channels)], dim=1)
    loss_fn = make_loss(name, mode)
    ours, theirs = loss_fn(by_cell, cell_rows(target), cell_rows(valid)), loss_fn(logits, target, valid)
    torch.testing.assert_close(ours, theirs, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(*(torch.autograd.grad(loss, logits)[0] for loss in (ours, theirs)), rtol=1e-10,
                               atol=1e-14)


@pytest.mark.parametrize(("name", "mode", "channels"), CASES)
def test_perfect_prediction_scores_below_a_wrong_one(name: str, mode: str, channels: int) -> None:
    target = curve_target(channels)
    loss_fn = make_loss(name, mode)
    perfect = loss_fn(confident_logits(target, channels), target)
    wrong = loss_fn(confident_logits(curve_target(channels, shift=3), channels), target)
    assert torch.isfinite(perfect) and torch.isfinite(wrong)
    assert float(perfect) < float(wrong)


@pytest.mark.parametrize(("name", "mode", "channels"), CASES)
def test_all_background_target_is_finite(name: str, mode: str, channels: int) -> None:
    target = torch.zeros(2, 32, 32, dtype=torch.long)
    logits = torch.randn(2, channels, 32, 32, generator=torch.Generator().manual_seed(2), requires_grad=True)
    loss = make_loss(name, mode)(logits, target, torch.ones(2, 32, 32))
    loss.backward()
    assert torch.isfinite(loss) and bool(torch.isfinite(logits.grad).all())


@pytest.mark.parametrize(("name", "mode", "channels"), CASES)
def test_no_valid_pixel_gives_zero_loss_and_gradient(name: str, mode: str, channels: int) -> None:
    logits = torch.randn(1, channels, 32, 32, generator=torch.Generator().manual_seed(4), requires_grad=True)
    loss = make_loss(name, mode)(logits, torch.ones(1, 32, 32, dtype=torch.long), torch.zeros(1, 32, 32))
    loss.backward()
    # Dice and Tversky reach 0 through their smoothing term (an empty image is a perfect match), the pixel means and
    # Lovasz by having no pixel to average or rank.
    assert loss.item() == 0.0
    assert not logits.grad.any()


def test_build_loss_builds_every_name_and_rejects_an_unknown_one() -> None:
    assert set(LOSSES) == {"dice", "focal", "lovasz", "soft_ce", "tversky"}
    for name in LOSSES:
        for mode, _ in MODES:
            assert isinstance(build_loss(LossParams(name=name), mode), torch.nn.Module)
    with pytest.raises(ValueError, match=r"'hinge' is not supported; use one of \['dice', 'focal'"):
        build_loss(LossParams(name="hinge"), "binary")


@pytest.mark.parametrize("name", LOSSES)
def test_inputs_that_cannot_match_are_refused_with_a_fix(name: str) -> None:
    loss_fn = build_loss(LossParams(name=name), "binary")
    with pytest.raises(ValueError, match="num_classes=1"):
        loss_fn(torch.zeros(1, 3, 8, 8), torch.zeros(1, 8, 8, dtype=torch.long))
    with pytest.raises(ValueError, match="drop the channel axis"):
        loss_fn(torch.zeros(1, 1, 8, 8), torch.zeros(1, 1, 8, 8, dtype=torch.long))
    with pytest.raises(ValueError, match=r"logits\[None\]"):
        loss_fn(torch.zeros(1, 8, 8), torch.zeros(1, 8, 8, dtype=torch.long))
    with pytest.raises(ValueError, match="the `valid` tensor that pad_collate returns"):
        loss_fn(torch.zeros(1, 1, 8, 8), torch.zeros(1, 8, 8, dtype=torch.long), torch.ones(1, 8, 9))
    with pytest.raises(ValueError, match="remap the mask"):
        build_loss(LossParams(name=name), "multiclass")(torch.zeros(1, 3, 8, 8), torch.full((1, 8, 8), 3))
    with pytest.raises(ValueError, match="'binary' or 'multiclass'"):
        build_loss(LossParams(name=name), "multilabel")


# Every pixel of a 1 x 4 image puts probability 0.5 / 0.3 / 0.2 on classes 0 / 1 / 2; the truth is
# 0, 0, 1, 1, so class 2 is absent. By hand, per class present (smooth 1):
#   class 0: TP = 1.0, FP = 1.0, FN = 1.0; class 1: TP = 0.6, FP = 0.6, FN = 1.4.
#   Tversky (0.3, 0.7): class 0 (1 + 1) / (1 + 0.3 + 0.7 + 1) = 2 / 3;
#   class 1 (0.6 + 1) / (0.6 + 0.18 + 0.98 + 1) = 1.6 / 2.76.
#   Dice: class 0 (2 + 1) / (2 + 2 + 1) = 0.6; class 1 (1.2 + 1) / (1.2 + 2 + 1) = 2.2 / 4.2.
# Class 2 would add 1 - 1 / (0.3 * 0.8 + 1) (Tversky) or 1 - 1 / (0.8 + 1) (Dice) if it were counted.
HAND_PROBS = torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64)
HAND_TARGET = torch.tensor([[[0, 0, 1, 1]]])
HAND_LOSS = {"tversky": ((1 - 2 / 3) + (1 - 1.6 / 2.76)) / 2, "dice": ((1 - 0.6) + (1 - 2.2 / 4.2)) / 2}


@pytest.mark.parametrize("name", sorted(HAND_LOSS))
def test_overlap_losses_average_only_the_classes_a_sample_shows(name: str) -> None:
    logits = HAND_PROBS.log()[None, :, None, None].expand(1, 3, 1, 4).clone()
    loss_fn = build_loss(LossParams(name=name, alpha=0.3, beta=0.7), "multiclass")
    torch.testing.assert_close(loss_fn(logits, HAND_TARGET), torch.tensor(HAND_LOSS[name], dtype=torch.float64))
    # A second sample showing only class 0 is averaged over class 0 alone; the batch is the mean of the two.
    only_zero = torch.zeros(1, 1, 4, dtype=torch.long)
    alone = loss_fn(logits, only_zero)
    tp = 2.0  # class 0 on every pixel: TP = 4 x 0.5, FN = 4 x 0.5, no FP
    expected_alone = 1 - (tp + 1) / (tp + 0.7 * 2.0 + 1) if name == "tversky" else 1 - (2 * tp + 1) / (2 + 4 + 1)
    torch.testing.assert_close(alone, torch.tensor(expected_alone, dtype=torch.float64))
    both = loss_fn(torch.cat([logits, logits]), torch.cat([HAND_TARGET, only_zero]))
    torch.testing.assert_close(both, (loss_fn(logits, HAND_TARGET) + alone) / 2)


@pytest.mark.parametrize(("mode", "channels"), MODES)
def test_overlap_sums_equal_the_one_hot_products_with_their_gradients(mode: str, channels: int) -> None:
    """TP, P and T against the one-hot products written out, with a fractional weight, value and gradient."""
    gen = torch.Generator().manual_seed(5)
    logits = torch.randn(3, channels, 7, 9, generator=gen, dtype=torch.float64, requires_grad=True)
    target = torch.randint(0, max(2, channels), (3, 7, 9), generator=gen)
    weight = torch.rand(3, 7, 9, generator=gen, dtype=torch.float64)
    if mode == "binary":
        prob, truth = torch.sigmoid(logits), (target > 0).double()[:, None]
    else:
        prob = torch.softmax(logits, dim=1)
        truth = torch.stack([(target == k).double() for k in range(channels)], dim=1)
    w = weight[:, None]
    expected = ((prob * truth * w).sum(dim=(2, 3)), (prob * w).sum(dim=(2, 3)), (truth * w).sum(dim=(2, 3)))
    got = overlap_sums(logits, target, weight, mode)
    for value, want in zip(got, expected, strict=True):
        torch.testing.assert_close(value, want, rtol=1e-12, atol=1e-12)
    probe = torch.randn(3, 3, max(1, channels), generator=gen, dtype=torch.float64)
    grad_got = torch.autograd.grad(sum((v * p).sum() for v, p in zip(got, probe, strict=True)), logits)[0]
    grad_want = torch.autograd.grad(sum((v * p).sum() for v, p in zip(expected, probe, strict=True)), logits)[0]
    torch.testing.assert_close(grad_got, grad_want, rtol=1e-10, atol=1e-12)
