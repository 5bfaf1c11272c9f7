"""VeerNet: shapes, the 32-multiple contract, the GroupNorm rule, attention masking, save/load."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

from veernet_pipeline.config import ModelParams, load_settings
from veernet_pipeline.model import VeerNet, build_model, group_count, group_norm, load_model, save_model
from veernet_pipeline.model.veernet import AttentionBottleneck, pad_to_multiple

PARAMS_YAML = Path(__file__).parents[2] / "params.yaml"
TINY = ModelParams(channels=[4, 8, 8, 16, 32], stem_channels=4, attention_layers=2, attention_heads=2)


def tiny_model(num_classes: int) -> VeerNet:
    torch.manual_seed(0)
    return build_model(TINY, num_classes)


@pytest.mark.parametrize(("channels", "groups"), [(32, 16), (8, 4), (24, 12), (128, 16), (6, 3), (2, 1), (1, 1)])
def test_group_rule(channels: int, groups: int) -> None:
    assert group_count(channels) == groups
    norm = group_norm(channels)
    assert (norm.num_groups, norm.num_channels) == (groups, channels)


def test_group_rule_rejects_zero_channels() -> None:
    with pytest.raises(ValueError, match="at least 1 channel"):
        group_count(0)


@pytest.mark.parametrize("profile", ["test", "demo"])
def test_no_batchnorm_and_groupnorm_follows_rule(profile: str) -> None:
    model = build_model(load_settings(PARAMS_YAML, profile=profile).model, 3)
    norms = [m for m in model.modules() if isinstance(m, nn.GroupNorm)]
    assert not [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    assert len(norms) > 10
    for norm in norms:
        assert norm.num_groups == group_count(norm.num_channels)


@pytest.mark.parametrize(("height", "width"), [(64, 320), (96, 128), (32, 32), (128, 64)])
@pytest.mark.parametrize("num_classes", [1, 3])
def test_output_shape_matches_input(height: int, width: int, num_classes: int) -> None:
    model = tiny_model(num_classes)
    x = torch.rand(2, 1, height, width)
    assert model(x).shape == (2, num_classes, height, width)


def test_bad_side_raises_with_fix() -> None:
    model = tiny_model(3)
    with pytest.raises(ValueError, match=r"\(1, 1, 60, 330\).*\(1, 1, 64, 352\).*pad_to_multiple"):
        model(torch.rand(1, 1, 60, 330))
    with pytest.raises(ValueError, match=r"\(B, 1, H, W\)"):
        model(torch.rand(1, 3, 64, 64))


def test_pad_to_multiple_pads_bottom_right_with_paper() -> None:
    x = torch.rand(2, 1, 50, 70)
    padded, valid = pad_to_multiple(x)
    assert padded.shape == (2, 1, 64, 96) and valid.shape == (2, 64, 96)
    assert torch.equal(padded[:, :, :50, :70], x)
    assert bool((padded[:, :, 50:] == 1.0).all()) and bool((padded[:, :, :, 70:] == 1.0).all())
    assert valid[:, :50, :70].min() == 1.0 and valid.sum() == 2 * 50 * 70
    logits = tiny_model(3)(padded, valid)
    assert logits.shape == (2, 3, 64, 96)


def test_attention_ignores_padded_positions() -> None:
    torch.manual_seed(0)
    block = AttentionBottleneck(32, layers=2, heads=2).eval()
    x = torch.randn(1, 32, 2, 5)
    key_padding = torch.zeros(1, 10, dtype=torch.bool)
    key_padding[0, [3, 4, 8, 9]] = True  # the two rightmost columns are padding
    changed = x.clone()
    changed[..., 3:] = torch.randn(1, 32, 2, 2) * 10
    with torch.no_grad():
        a, b = block(x, key_padding), block(changed, key_padding)
    torch.testing.assert_close(a[..., :3], b[..., :3])


def test_all_padding_sample_is_rejected() -> None:
    with pytest.raises(ValueError, match="no valid pixel"):
        tiny_model(1)(torch.rand(1, 1, 32, 64), torch.zeros(1, 32, 64))


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    model = tiny_model(3)
    save_model(tmp_path, model, TINY, 3)
    loaded = load_model(tmp_path)
    assert not loaded.training and loaded.num_classes == 3 and loaded.params == TINY
    x = torch.rand(1, 1, 64, 128)
    with torch.no_grad():
        torch.testing.assert_close(loaded(x), model.eval()(x))


def test_load_model_names_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="model.json"):
        load_model(tmp_path)
