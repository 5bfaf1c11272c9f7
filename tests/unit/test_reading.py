"""Reading a scan: tile planning and stitching, test-time mirroring, rows -> values with wraps and skew."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.cpu import CPUINFO, has_bf16_instructions
from tests.nets import InkIsCurve, untrained_veernet
from veernet_pipeline.config import Settings
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.model.veernet import pad_to_multiple
from veernet_pipeline.reading.predict import inference_dtype, logits_to_probs, plan_tiles, predict_probs
from veernet_pipeline.reading.values import rows_to_values, wrap_counts

# --- tiling --------------------------------------------------------------------------------

@pytest.mark.parametrize(("width", "tile", "overlap"), [(100, 256, 64), (256, 256, 64), (600, 256, 64),
                                                        (1000, 128, 96), (257, 256, 0)])
def test_plan_tiles_kept_ranges_partition_the_width(width: int, tile: int, overlap: int) -> None:
    tiles = plan_tiles(width, tile, overlap)
    assert tiles[0].keep_start == 0 and tiles[-1].keep_stop == width
    for a, b in zip(tiles, tiles[1:], strict=False):
        assert a.keep_stop == b.keep_start
    for t in tiles:
        assert t.start <= t.keep_start < t.keep_stop <= t.stop <= width
        assert t.stop - t.start == min(tile, width)


def test_plan_tiles_cuts_in_the_middle_of_the_overlap() -> None:
    tiles = plan_tiles(600, 256, 64)
    assert [(t.start, t.stop) for t in tiles] == [(0, 256), (192, 448), (344, 600)]
    assert [t.keep_start for t in tiles] == [0, 224, 396]


def test_plan_tiles_rejects_bad_tile_sizes() -> None:
    with pytest.raises(ValueError, match="multiple of 32"):
        plan_tiles(600, 250, 10)
    with pytest.raises(ValueError, match="tile_overlap"):
        plan_tiles(600, 256, 256)


def test_binary_logit_becomes_background_and_curve_probabilities() -> None:
    probs = logits_to_probs(torch.tensor([[[[0.0, 100.0]]]]))
    np.testing.assert_allclose(probs.numpy()[0, :, 0], [[0.5, 0.0], [0.5, 1.0]])


# --- predict_probs -------------------------------------------------------------------------

def test_single_tile_equals_one_padded_forward(test_settings: Settings) -> None:
    model = untrained_veernet(test_settings, NUM_CLASSES)
    image = np.random.default_rng([1, 2]).integers(0, 256, size=(100, 200), dtype=np.uint8)
    probs = predict_probs(model, image, tile_width=256, tile_overlap=64, dtype=None)  # fp32, as the forward below
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as predict_probs reads each tile: on one torch thread, whatever the caller's count
    try:
        with torch.no_grad():
            padded, valid = pad_to_multiple(torch.from_numpy(image).float()[None, None] / 255.0)
            direct = torch.softmax(model(padded, valid), dim=1)[0, :, :100, :200].numpy()
    finally:
        torch.set_num_threads(threads)
    assert probs.shape == (NUM_CLASSES, 100, 200) and probs.dtype == np.float32
    np.testing.assert_allclose(probs, direct, atol=1e-6)


def test_tiled_veernet_covers_every_column(test_settings: Settings) -> None:
    model = untrained_veernet(test_settings, NUM_CLASSES)
    image = np.random.default_rng([1, 3]).integers(0, 256, size=(96, 700), dtype=np.uint8)
    probs = predict_probs(model, image, tile_width=256, tile_overlap=64)
    assert probs.shape == (NUM_CLASSES, 96, 700)
    assert np.isfinite(probs).all()
    np.testing.assert_allclose(probs.sum(axis=0), 1.0, atol=1e-5)
    assert np.array_equal(probs, predict_probs(model, image, tile_width=256, tile_overlap=64))  # deterministic


@pytest.mark.skipif(not CPUINFO.exists(), reason="needs Linux's /proc/cpuinfo to know the CPU's flags")
def test_cpu_reads_in_bf16_exactly_where_the_cpu_has_bf16_instructions(test_settings: Settings) -> None:
    """bf16 autocast where the kernel lists avx512_bf16 or amx_bf16, fp32 elsewhere; dtype=None is fp32 anywhere."""
    expected = torch.bfloat16 if has_bf16_instructions() else None
    assert inference_dtype("cpu") == expected
    model = untrained_veernet(test_settings, NUM_CLASSES)
    image = np.random.default_rng([1, 5]).integers(0, 256, size=(64, 300), dtype=np.uint8)
    full = predict_probs(model, image, tile_width=256, tile_overlap=64, dtype=None)
    low = predict_probs(model, image, tile_width=256, tile_overlap=64, dtype=torch.bfloat16)
    assert not np.array_equal(low, full)  # the convolutions ran in bf16
    np.testing.assert_allclose(low.sum(axis=0), 1.0, atol=1e-5)
    # bf16 keeps 8 bits of mantissa: probabilities move by at most a few hundredths here.
    assert float(np.abs(low - full).max()) < 0.05
    default = predict_probs(model, image, tile_width=256, tile_overlap=64)
    assert np.array_equal(default, low if expected is not None else full)


def test_tiled_equals_untiled_for_a_per_pixel_net() -> None:
    image = np.random.default_rng([1, 4]).integers(0, 256, size=(50, 1000), dtype=np.uint8)
    model = InkIsCurve().eval()
    tiled = predict_probs(model, image, tile_width=128, tile_overlap=32)
    whole = predict_probs(model, image, tile_width=1024, tile_overlap=0)
    np.testing.assert_allclose(tiled, whole, atol=1e-6)


def test_mirror_is_the_mean_of_the_scan_and_its_two_mirror_images(test_settings: Settings) -> None:
    model = untrained_veernet(test_settings, NUM_CLASSES)
    image = np.random.default_rng([1, 5]).integers(0, 256, size=(96, 300), dtype=np.uint8)
    plain = predict_probs(model, image, tile_width=256, tile_overlap=64)
    flipped = np.ascontiguousarray(image[:, ::-1])
    along_depth = predict_probs(model, flipped, tile_width=256, tile_overlap=64)[:, :, ::-1]
    across = predict_probs(model, np.ascontiguousarray(image[::-1]), tile_width=256, tile_overlap=64)[:, ::-1]
    mirrored = predict_probs(model, image, tile_width=256, tile_overlap=64, mirror=True)
    assert mirrored.shape == plain.shape and mirrored.dtype == np.float32
    np.testing.assert_allclose(mirrored, (plain + along_depth + across) / 3.0, atol=1e-6)
    np.testing.assert_allclose(mirrored.sum(axis=0), 1.0, atol=1e-5)
    assert not np.allclose(mirrored, plain)  # an untrained net is not mirror-symmetric: the passes differ


# --- values ----------------------------------------------------------------------------------

def test_wrap_counts_follow_a_trace_across_the_edges() -> None:
    height = 100
    rows = np.array([50, 80, 95, np.nan, np.nan, 3, 10, 4, 97, 90, 2, 50], dtype=float)
    # Fractions .505 .805 .955 - - .035 .105 .045 .975 .905 .025 .505. By hand, the unwrapped changes: .955 -> .035
    # is 0.08 one scale on (1.035) against 0.92 on the same; .045 -> .975 back 0.07; .905 -> .025 on 0.12; the
    # last column, .505: 1.505 is 0.48 from 1.025, .505 0.52, so it stays on. Not read: 0.
    assert wrap_counts(rows, height, 1).tolist() == [0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1]
    assert wrap_counts(rows, height, 0).tolist() == [0] * len(rows)  # no backup scale declared
    assert wrap_counts(np.full(5, np.nan), 100, 1).tolist() == [0] * 5  # nothing read: the main scale


def test_a_trace_that_starts_wrapped_starts_on_the_scale_its_later_columns_agree_with() -> None:
    # Leaves the top edge after 300 columns and re-enters at the bottom for 900: the value is continuous (.035 ->
    # .975 is 0.06 one scale down) whichever scale it starts on. Starting one on (+1) costs START_COST 0.25 and
    # 300 columns off the main scale x 0.001 = 0.55; starting on it leaves 900 on -1 = 0.90.
    rows = np.r_[np.linspace(50, 3, 300), np.linspace(97, 50, 900)]
    assert wrap_counts(rows, 100, 1).tolist() == [1] * 300 + [0] * 900
    assert wrap_counts(rows[::-1].copy(), 100, 1).tolist() == [0] * 900 + [1] * 300  # read upwards: no start cost
    # Half and half (300 and 300): 0.55 against 0.30, the main-scale start holds and the rest reads on -1.
    assert wrap_counts(rows[:600], 100, 1).tolist() == [0] * 300 + [-1] * 300


def test_a_wrap_across_a_gap_away_from_the_edge_is_still_a_wrap() -> None:
    # Read wrapped for 150 columns, last at .245 of the track before a gap, next at .985, then 2,000 columns on the
    # main scale. One scale down the change is 0.26, on the same scale 0.74: a wrap, though .245 lies outside a 0.2
    # edge band (the rule before counted no step there and started on the main scale). By hand: starting on +1
    # costs 0.25 + 150 x 0.001 + 0.26 = 0.66, on the main scale 0.74.
    rows = np.r_[np.linspace(17, 24, 150), np.nan, np.linspace(98, 50, 2000)]
    assert wrap_counts(rows, 100, 1).tolist() == [1] * 150 + [0] + [0] * 2000
    # The limit: 300 wrapped columns cost 0.81 against 0.74, and with nothing else to go on the start holds.
    rows = np.r_[np.linspace(17, 24, 300), np.nan, np.linspace(98, 50, 2000)]
    assert wrap_counts(rows, 100, 1).tolist() == [0] * 2301


def test_a_stroke_read_column_by_column_across_the_track_is_not_a_wrap() -> None:
    rows = np.array([90, 70, 50, 30, 10, 5, 5, 5], dtype=float)  # 0.2 a column: never the shorter way round an edge
    assert wrap_counts(rows, 100, 1).tolist() == [0] * 8
    # The same stroke read in one column (a jump of 0.85) is taken for a wrap: the picture cannot tell them apart.
    # Of the two continuous readings, the one cheaper off the main scale: +1 for 3 columns (0.003), not -1 for 2
    # from the start (0.25 + 0.002).
    assert wrap_counts(np.array([90, 90, 5, 5, 5], dtype=float), 100, 1).tolist() == [0, 0, 1, 1, 1]


def test_rows_to_values_undoes_skew_and_wrap() -> None:
    width, height = 400, 120
    calib = Calibration.from_dict({
        "depth": {"top": 0.0, "bottom": 400.0, "unit": "M"},
        "curves": [{"mnemonic": "GR", "unit": "GAPI", "top_value": 150.0, "bottom_value": 0.0, "scale": "linear",
                    "backup": {"mode": "wrap", "max_wraps": 1}}],
        "skew": {"angle_deg": 0.4, "pivot_column": 200.0},
    })
    values = 75.0 + 100.0 * np.sin(np.arange(width) / 40.0)  # leaves the reversed 150-0 track at both ends
    drawn, wraps = calib.value_to_drawn_row(values, height, 0)
    assert set(np.unique(wraps)) == {-1, 0, 1}
    image_rows = drawn + calib.skew_offset(np.arange(width))
    image_rows[50:55] = np.nan  # a gap read as absent stays NaN
    read, read_wraps = rows_to_values(calib, image_rows, height, 0)
    ok = np.isfinite(image_rows)
    assert np.isnan(read[~ok]).all()
    # Exact but within half a pixel of an edge, where drawing clips to the outermost pixel row.
    np.testing.assert_allclose(read[ok], values[ok], atol=0.5 * 150.0 / height)
    np.testing.assert_array_equal(read_wraps[ok], wraps[ok])
