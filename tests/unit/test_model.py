"""VeerNet: shapes, the 32-multiple contract, the GroupNorm rule, attention masking, space-to-depth, depth
context, save/load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch import nn

from veernet_pipeline.config import ModelParams, load_settings
from veernet_pipeline.io.classes import CLASSES, NUM_CLASSES
from veernet_pipeline.model import VeerNet, build_model, group_count, group_norm, load_model, save_model
from veernet_pipeline.model.blocks import AttentionBottleneck, DepthContext, positional_encoding_2d
from veernet_pipeline.model.veernet import MODEL_FILE, cell_rows, depth_to_space, pad_to_multiple

PARAMS_YAML = Path(__file__).parents[2] / "params.yaml"
TINY = ModelParams(channels=[4, 8, 8, 16, 32], attention_layers=2, attention_heads=2)


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


@pytest.mark.parametrize("profile", ["test", "demo", "cpu", "paper"])
def test_no_batchnorm_and_groupnorm_follows_rule(profile: str) -> None:
    model = build_model(load_settings(PARAMS_YAML, profile=profile).model, NUM_CLASSES)
    norms = [m for m in model.modules() if isinstance(m, nn.GroupNorm)]
    assert not [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    assert len(norms) > 10
    for norm in norms:
        assert norm.num_groups == group_count(norm.num_channels)


# Tall tracks (1,024 rows), the archive's strips (480-640 rows), short and narrow strips, one 32 x 32 cell.
@pytest.mark.parametrize(("height", "width"), [(64, 320), (96, 128), (32, 32), (128, 64), (1024, 64), (32, 512)])
@pytest.mark.parametrize("num_classes", [1, NUM_CLASSES])
def test_output_shape_matches_input(height: int, width: int, num_classes: int) -> None:
    model = tiny_model(num_classes)
    x = torch.rand(2, 1, height, width)
    with torch.no_grad():
        assert model(x).shape == (2, num_classes, height, width)


def test_each_pixel_has_its_own_logit() -> None:
    """The head's channel k * 4 + 2i + j is class k at pixel (i, j) of its 2 x 2 cell; the cell's own pixels reach it.

    A head that copies pixel channel p of the cell into logit channel k * 4 + p for every class makes every
    logit map equal the inverted input exactly, pixel for pixel: a one-pixel line comes out where it went in.
    """
    model = tiny_model(NUM_CLASSES).eval()
    features = TINY.channels[0]
    with torch.no_grad():
        model.head.weight.zero_()
        model.head.bias.zero_()
        for k in range(NUM_CLASSES):
            for p in range(4):
                model.head.weight[k * 4 + p, features + p] = 1.0
    x = torch.ones(1, 1, 64, 96)
    x[0, 0, 37, :] = 0.0  # a one-pixel line on an odd row
    x[0, 0, :, 50] = 0.25  # and a fainter one on an even column
    with torch.no_grad():
        logits = model(x)
    for k in range(NUM_CLASSES):
        assert torch.equal(logits[0, k], 1.0 - x[0, 0])


def test_depth_to_space_puts_each_channel_on_its_pixel_of_the_cell() -> None:
    """Channel k * 4 + 2i + j of a cell is pixel (i, j) of class k: by hand on one cell, and pixel_shuffle's bytes."""
    cell = torch.arange(8.0).reshape(1, 8, 1, 1)  # two classes, one 2 x 2 cell
    assert torch.equal(depth_to_space(cell, 2), torch.tensor([[[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]]]]))
    x = torch.randn(2, 12, 5, 7, generator=torch.Generator().manual_seed(0))
    for layout in (torch.contiguous_format, torch.channels_last):
        out = depth_to_space(x.contiguous(memory_format=layout), 2)
        assert torch.equal(out, nn.functional.pixel_shuffle(x, 2)) and out.is_contiguous()


def test_depth_to_space_gradient_is_pixel_shuffles() -> None:
    """Its own backward against autograd's through pixel_shuffle (same bytes), and against finite differences."""
    x = torch.randn(2, 12, 5, 7, generator=torch.Generator().manual_seed(1))
    x = x.contiguous(memory_format=torch.channels_last)
    grad = torch.randn(2, 3, 10, 14, generator=torch.Generator().manual_seed(2))
    ours, theirs = x.clone().requires_grad_(), x.clone().requires_grad_()
    depth_to_space(ours, 2).backward(grad)
    nn.functional.pixel_shuffle(theirs, 2).backward(grad)
    assert torch.equal(ours.grad, theirs.grad) and ours.grad.is_contiguous(memory_format=torch.channels_last)
    small = torch.randn(1, 8, 2, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    assert torch.autograd.gradcheck(lambda t: depth_to_space(t, 2), (small.requires_grad_(),))


def test_cell_rows_orders_pixels_by_their_place_in_the_cell_first() -> None:
    """Pixel (2r + i, 2c + j) goes to row (2i + j) * h + r, column c: checked against loops over a 4 x 6 map."""
    maps = torch.arange(2 * 4 * 6).reshape(2, 4, 6)
    expected = torch.empty(2, 8, 3, dtype=maps.dtype)
    for r in range(2):
        for c in range(3):
            for i in range(2):
                for j in range(2):
                    expected[:, (2 * i + j) * 2 + r, c] = maps[:, 2 * r + i, 2 * c + j]
    assert torch.equal(cell_rows(maps), expected)


def test_logits_by_cell_are_the_pixels_logits_in_cell_row_order() -> None:
    """`by_cell=True` gives every pixel's logit of the ordinary forward, rearranged as `cell_rows` orders the
    target; its gradient reaches the same weights (the head's among them) as the ordinary one's."""
    model = tiny_model(NUM_CLASSES)
    x = torch.rand(2, 1, 64, 96, generator=torch.Generator().manual_seed(4))
    full, by_cell = model(x), model(x, by_cell=True)
    per_class = torch.stack([cell_rows(full[:, k]) for k in range(NUM_CLASSES)], dim=1)
    assert by_cell.shape == (2, NUM_CLASSES, 128, 48)
    assert torch.allclose(by_cell, per_class, atol=1e-5)
    weights = torch.randn(per_class.shape, generator=torch.Generator().manual_seed(5))
    ours = torch.autograd.grad((by_cell * weights).sum(), list(model.parameters()))
    theirs = torch.autograd.grad((per_class * weights).sum(), list(model.parameters()))
    for got, want in zip(ours, theirs, strict=True):  # float rounding of sums taken in another order
        assert (got - want).abs().max() <= 1e-5 * want.abs().max()


class _CatDtypes(torch.overrides.TorchFunctionMode):
    """Records the dtype of every 4-D `torch.cat` result: the decoder's concatenations of maps (the position
    code's are 3-D and fp32 by design)."""

    def __init__(self) -> None:
        super().__init__()
        self.dtypes: list[torch.dtype] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204 - torch's protocol
        out = func(*args, **(kwargs or {}))
        if func is torch.cat and out.ndim == 4:
            self.dtypes.append(out.dtype)
        return out


def test_under_bf16_autocast_no_concatenation_is_promoted_to_fp32() -> None:
    """The cell's pixels join two half-scale concatenations; left in fp32 they would promote both to fp32 (and every
    convolution after casts them back), so the forward casts them once under autocast."""
    model = tiny_model(NUM_CLASSES).eval()
    x = torch.rand(1, 1, 64, 96, generator=torch.Generator().manual_seed(6))
    recorder = _CatDtypes()
    with torch.inference_mode(), torch.autocast("cpu", torch.bfloat16), recorder:
        model(x)
    assert len(recorder.dtypes) >= len(model.decoder) + 1  # every decoder stage's and the head's
    assert set(recorder.dtypes) == {torch.bfloat16}


@pytest.mark.parametrize("channels", [8, 32])
def test_group_norm_in_channels_last_has_torchs_output_and_gradients(channels: int) -> None:
    """The channels_last backward against torch's own GroupNorm backward, on maps big enough to take it
    (64 x 32 pixels), with a scale and shift that are not the identity; the forward is torch's bytes."""
    generator = torch.Generator().manual_seed(channels)
    ours = group_norm(channels)
    with torch.no_grad():
        ours.weight.copy_(torch.randn(channels, generator=generator))
        ours.bias.copy_(torch.randn(channels, generator=generator))
    theirs = nn.GroupNorm(ours.num_groups, channels)
    theirs.load_state_dict(ours.state_dict())
    x = (3 * torch.randn(2, channels, 64, 32, generator=generator) + 1).contiguous(memory_format=torch.channels_last)
    grad = torch.randn(2, channels, 64, 32, generator=generator).contiguous(memory_format=torch.channels_last)
    x_ours, x_theirs = x.clone().requires_grad_(), x.clone().requires_grad_()
    y_ours, y_theirs = ours(x_ours), theirs(x_theirs)
    assert "ChannelsLast" in type(y_ours.grad_fn).__name__  # the path under test, not torch's
    assert torch.equal(y_ours, y_theirs)
    y_ours.backward(grad)
    y_theirs.backward(grad)
    for got, want in ((x_ours.grad, x_theirs.grad), (ours.weight.grad, theirs.weight.grad),
                      (ours.bias.grad, theirs.bias.grad)):
        assert torch.allclose(got, want, rtol=1e-4, atol=1e-4)
    assert x_ours.grad.is_contiguous(memory_format=torch.channels_last)


def test_group_norm_of_small_or_default_layout_maps_is_torchs() -> None:
    """Maps under MIN_PIXELS, in the default layout or without gradients go through torch's GroupNorm."""
    norm = group_norm(16)
    small = torch.rand(1, 16, 32, 32, requires_grad=True).contiguous(memory_format=torch.channels_last)
    assert "ChannelsLast" not in type(norm(small).grad_fn).__name__
    assert "ChannelsLast" not in type(norm(torch.rand(1, 16, 64, 64, requires_grad=True)).grad_fn).__name__
    with torch.no_grad():
        assert norm(torch.rand(1, 16, 64, 64).contiguous(memory_format=torch.channels_last)).grad_fn is None


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


def test_a_crops_row_code_is_the_tracks_rows_from_its_first_row() -> None:
    # The code of rows 3-4 of a grid starting at row 3 is rows 3-4 of the code of a 5-row grid starting at 0.
    whole = positional_encoding_2d(32, 5, 4, torch.device("cpu"))
    crops = positional_encoding_2d(32, 2, 4, torch.device("cpu"), torch.tensor([3, 0]))
    assert crops.shape == (2, 32, 2, 4)
    torch.testing.assert_close(crops[0], whole[:, 3:5], rtol=0, atol=1e-6)
    assert torch.equal(crops[1], whole[:, :2])


def test_first_row_zero_is_the_uncropped_net_and_an_offset_moves_the_logits() -> None:
    model = tiny_model(NUM_CLASSES).eval()
    x = torch.rand(2, 1, 64, 96)
    with torch.no_grad():
        plain = model(x)
        assert torch.equal(model(x, None, torch.tensor([0, 0])), plain)
        moved = model(x, None, torch.tensor([0, 64]))
    assert torch.equal(moved[0], plain[0]) and not torch.allclose(moved[1], plain[1])


def test_all_padding_sample_is_rejected() -> None:
    with pytest.raises(ValueError, match="no valid pixel"):
        tiny_model(1)(torch.rand(1, 1, 32, 64), torch.zeros(1, 32, 64))


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    model = tiny_model(NUM_CLASSES)
    save_model(tmp_path, model, TINY, NUM_CLASSES)
    meta = json.loads((tmp_path / MODEL_FILE).read_text())
    assert meta["format"] == "veernet/2" and meta["classes"] == list(CLASSES)
    loaded = load_model(tmp_path)
    assert not loaded.training and loaded.num_classes == NUM_CLASSES and loaded.params == TINY
    x = torch.rand(1, 1, 64, 128)
    with torch.no_grad():
        torch.testing.assert_close(loaded(x), model.eval()(x))
    save_model(tmp_path / "binary", tiny_model(1), TINY, 1)
    assert json.loads((tmp_path / "binary" / MODEL_FILE).read_text())["classes"] == ["curve"]


def test_the_same_weights_save_as_the_same_bytes(tmp_path: Path) -> None:
    # Two saves of one model into two folders: every byte equal (each save writes through its own random
    # temporary name first, which torch.save must not record).
    model = tiny_model(NUM_CLASSES)
    for name in ("a", "b"):
        save_model(tmp_path / name, model, TINY, NUM_CLASSES)
    assert (tmp_path / "a" / "weights.pt").read_bytes() == (tmp_path / "b" / "weights.pt").read_bytes()


def test_a_model_from_before_the_line_styles_must_be_retrained(tmp_path: Path) -> None:
    save_model(tmp_path, tiny_model(NUM_CLASSES), TINY, NUM_CLASSES)
    meta = json.loads((tmp_path / MODEL_FILE).read_text())
    # model.json as veernet/1 wrote it: 3 classes, no class names.
    old = {"format": "veernet/1", "num_classes": 3, "model": {**meta["model"], "stem_channels": 8}}
    (tmp_path / MODEL_FILE).write_text(json.dumps(old))
    with pytest.raises(ValueError, match=r"veernet/1.*3 classes \(background, curve A, curve B\).*train_binary"):
        load_model(tmp_path)
    (tmp_path / MODEL_FILE).write_text(json.dumps({**meta, "classes": ["background", "curve_a", "curve_b"]}))
    with pytest.raises(ValueError, match="retrain"):
        load_model(tmp_path)
    with pytest.raises(ValueError, match=r"1 output \(binary\) or 7"):
        save_model(tmp_path / "three", tiny_model(3), TINY, 3)


def test_load_model_names_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="model.json"):
        load_model(tmp_path)


def _reach(block: nn.Module, height: int, width: int) -> torch.Tensor:
    """Which input cells move the output at the centre cell: |d out / d in| > 0.  Shape: (height, width) bool."""
    torch.manual_seed(0)
    x = torch.rand(1, 4, height, width, requires_grad=True)
    block(x)[0, :, height // 2, width // 2].sum().backward()
    return x.grad.abs().sum(dim=(0, 1)) > 0


def test_depth_context_reaches_far_along_depth_and_one_row_per_layer_across() -> None:
    # Dilations 2 and 8: each layer reaches +-d columns and +-1 row, and the residual sums keep every
    # nearer cell, so by hand the centre sees columns within 2 + 8 = 10 and rows within 2 (two layers).
    block = DepthContext(4, [2, 8])
    for layer in block.layers:  # GroupNorm pools statistics over the whole map: set aside, the convolutions' reach
        layer[1] = nn.Identity()
    seen = _reach(block, 9, 31)
    rows, cols = torch.nonzero(seen, as_tuple=True)
    assert (int(cols.min()) - 15, int(cols.max()) - 15) == (-10, 10)
    assert (int(rows.min()) - 4, int(rows.max()) - 4) == (-2, 2)
    # A plain 3x3 stack of two layers would reach 2 columns: the block sees five times as far along depth.
    plain = nn.Sequential(nn.Conv2d(4, 4, 3, padding=1), nn.Conv2d(4, 4, 3, padding=1))
    assert int(torch.nonzero(_reach(plain, 9, 31), as_tuple=True)[1].max()) - 15 == 2


def test_no_depth_context_is_the_net_of_before(tmp_path: Path) -> None:
    # depth_context [] adds no weight, so a model.json written before the field existed loads as the same net.
    model = tiny_model(NUM_CLASSES)
    assert not any(name.startswith("context.") for name in model.state_dict())
    save_model(tmp_path, model, TINY, NUM_CLASSES)
    meta = json.loads((tmp_path / MODEL_FILE).read_text())
    del meta["model"]["depth_context"]
    (tmp_path / MODEL_FILE).write_text(json.dumps(meta))
    loaded = load_model(tmp_path)
    x = torch.rand(1, 1, 64, 128)
    with torch.no_grad():
        torch.testing.assert_close(loaded(x), model.eval()(x))
    wide = build_model(TINY.model_copy(update={"depth_context": [2, 4]}), NUM_CLASSES)
    # Two layers of one 3x3 convolution and one GroupNorm each at the 1/4 width (8 channels).
    extra = sum(p.numel() for p in wide.parameters()) - sum(p.numel() for p in model.parameters())
    assert extra == 2 * (8 * 8 * 9 + 2 * 8)
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        ModelParams(channels=[4, 8, 8, 16, 32], attention_layers=1, attention_heads=2, depth_context=[0])
