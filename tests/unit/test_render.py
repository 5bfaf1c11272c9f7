"""Rendering: exact labels (redrawn from the written LAS and sidecar), the crossing rule, determinism, artefacts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.renders import CLEAN, DOCUMENTED_ORDER, only_style, redraw, write_truth
from tests.renders import synth_params as _params
from veernet_pipeline.config import SynthesizeParams
from veernet_pipeline.io.calibration import Calibration, CalibrationError
from veernet_pipeline.io.classes import CLASSES, OTHER_INK, style_class
from veernet_pipeline.synthetic import artefacts, text
from veernet_pipeline.synthetic.curves import Well, load_wells
from veernet_pipeline.synthetic.render import SyntheticLog, render_instance
from veernet_pipeline.synthetic.strokes import stroke_pixels
from veernet_pipeline.synthetic.styles import CurveStyle

# Solid curves without pen skips, boxes, banners or flags: every centre pixel must carry a curve label.
SOLID = (*CLEAN, only_style("solid"))


@pytest.fixture(scope="module")
def wells() -> list[Well]:
    return load_wells("")


def _assert_in_band(owned: np.ndarray, rows: np.ndarray, wraps: np.ndarray, line_width: int) -> None:
    # An owned pixel comes from a run between neighbouring centre rows, thickened by the line width;
    # next to a change of backup scale the run reaches the track edge, so those columns are not bounded.
    reach = line_width + 1
    lows = np.lib.stride_tricks.sliding_window_view(np.pad(rows, reach, mode="edge"), 2 * reach + 1)
    frames = np.lib.stride_tricks.sliding_window_view(np.pad(wraps, reach, mode="edge"), 2 * reach + 1)
    bounded = (frames == wraps[:, None]).all(axis=1)
    ys, xs = np.nonzero(owned)
    keep = bounded[xs]
    assert (ys[keep] >= lows.min(axis=1)[xs[keep]] - line_width).all()
    assert (ys[keep] <= lows.max(axis=1)[xs[keep]] + line_width).all()


def _rank(log: SyntheticLog, k: int) -> tuple[int, int, int]:
    # The documented crossing rule: sparse styles later, then the thinner, then the later sidecar curve.
    return DOCUMENTED_ORDER.index(log.styles[k]), -log.line_widths[k], k


@pytest.mark.parametrize("overrides", [
    (),
    ("synthesize.backup_share=1", "synthesize.artefacts.bilevel.share=1"),
    (*SOLID, "synthesize.backup_share=1", "synthesize.artefacts.skew.share=1",
     "synthesize.artefacts.skew.strength={min: 1.0, max: 1.0}"),
    (*SOLID, "synthesize.backup_share=1", "synthesize.log_scale_share=1", "synthesize.reversed_share=1"),
    (*CLEAN, "synthesize.backup_share=1", "synthesize.log_scale_share=0", "synthesize.distinct_styles=0",
     "synthesize.steep.share=1", "synthesize.straight.share=0.5"),
], ids=["defaults", "wrap-bilevel", "solid-wrap-skew", "solid-wrap-log-reversed", "clean-steep-straight"])
def test_mask_is_the_curves_redrawn_from_las_and_sidecar(tmp_path: Path, wells: list[Well],
                                                         overrides: tuple[str, ...]) -> None:
    params = _params(*overrides)
    solid = only_style("solid") in overrides
    clean = overrides[: len(CLEAN)] == CLEAN
    wrapped = crossed = 0
    for index in range(6):
        n_curves = 2 + index % 4
        log = render_instance(11, index, params, wells, n_curves)
        height, width = log.mask.shape
        las, calib = write_truth(tmp_path, f"i{index}", log)
        sidecar = json.loads(calib.read_text())
        assert [c["style"] for c in sidecar["curves"]] == list(log.styles) and len(log.styles) == n_curves
        # Each labelled pixel is ink of a curve of that class: owner and class agree everywhere.
        owned = log.curves > 0
        assert (log.mask[~owned] <= OTHER_INK).all()
        classes = np.array([0] + [style_class(s) for s in log.styles], dtype=np.uint8)
        assert (log.mask[owned] == classes[log.curves[owned]]).all()
        for curve, (rows, wraps) in enumerate(redraw(las, calib, height, width)):
            _assert_in_band(log.curves == curve + 1, rows, wraps, log.line_widths[curve])
            wrapped += int((wraps != 0).sum())
            if log.styles[curve] == "solid" and (solid or clean):
                # A solid curve without pen skips inks its centre pixel in every column.
                inside = (rows >= 0) & (rows < height)
                owners = log.curves[rows[inside], np.arange(width)[inside]]
                # Crossing rule: where another curve owns this one's centre pixel, it is drawn later.
                others = np.unique(owners[(owners != curve + 1) & (owners > 0)]) - 1
                assert all(_rank(log, int(o)) > _rank(log, curve) for o in others), (index, curve, others)
                crossed += others.size
                assert (owners > 0).all(), (index, curve)
        if "bilevel" in log.artefacts:
            assert set(np.unique(log.image)) <= {0, 255}
            assert (log.image[log.mask > 0] == 0).all()
        if "skew" in log.artefacts:
            assert 0 < abs(sidecar["skew"]["angle_deg"]) <= 1.0
    if "synthesize.backup_share=1" in overrides:
        assert wrapped > 0
    if solid:
        assert crossed > 0


@pytest.mark.parametrize("line_width", [1, 2, 3, 4])
def test_a_steep_stroke_is_centred_on_its_curve_whatever_its_width(line_width: int) -> None:
    """Each column's ink is centred on the curve's row there: an even width must not draw it half a column late."""
    width, height, slope = 60, 400, 5.0
    rows = 50.0 + slope * np.arange(width)  # falls 5 px per column
    style = CurveStyle("solid", (), 0.0, line_width, 0.0, (), (), ())
    ys, xs, _ = stroke_pixels(rows, np.zeros(width, dtype=np.int64), np.zeros(width, dtype=np.int64), height, style)
    for x in range(5, width - 5):
        # Within 1 px; a stroke drawn half a column late is off by slope / 2 = 2.5 px.
        assert abs(ys[xs == x].mean() - rows[x]) <= 1.0, (line_width, x, ys[xs == x].mean(), rows[x])


def test_same_bytes_twice_and_alone(wells: list[Well]) -> None:
    params = _params()
    text.glyph.cache_clear()
    text.text_alpha.cache_clear()
    alone = render_instance(4, 3, params, wells, 2)
    for index in range(4):
        render_instance(4, index, params, wells, 2)
    again = render_instance(4, 3, params, wells, 2)
    assert alone.image.tobytes() == again.image.tobytes() and alone.mask.tobytes() == again.mask.tobytes()
    assert alone.calibration.to_dict() == again.calibration.to_dict()
    sized = render_instance(4, 3, params, wells, 2, size=(100, 400))
    assert sized.image.shape == sized.mask.shape == (100, 400)
    assert sized.image.tobytes() == render_instance(4, 3, params, wells, 2, size=(100, 400)).image.tobytes()


def test_sizes_within_bounds(wells: list[Well]) -> None:
    params = _params()
    for index in range(8):
        log = render_instance(6, index, params, wells, 1 + index % 5)
        height, width = log.image.shape
        tall = params.tall.height.min <= height <= params.tall.height.max
        assert (params.height.min <= height <= params.height.max) != tall, height
        assert tall == ("tall" in log.features) and params.width.min <= width <= params.width.max
        assert log.image.dtype == log.mask.dtype == np.uint8 and log.mask.shape == log.image.shape
        assert set(np.unique(log.mask)) <= set(range(len(CLASSES)))


def _with(artefact: str, strength: str = "") -> SynthesizeParams:
    forced = [f"synthesize.artefacts.{artefact}.share=1"] + ([f"synthesize.artefacts.{artefact}.strength={strength}"]
                                                              if strength else [])
    return _params(*SOLID, *forced)


def test_every_artefact_is_reachable_and_switchable(wells: list[Well]) -> None:
    def render(params: SynthesizeParams) -> SyntheticLog:
        return render_instance(8, 1, params, wells, 2, size=(128, 1024))

    plain = render(_params(*SOLID))
    assert plain.artefacts == ()
    paper = plain.image == plain.image.max()
    assert paper.mean() > 0.5 and plain.image[paper].std() == 0
    textured = render(_with("paper", "{min: 8, max: 8}"))
    assert textured.artefacts == ("paper",) and textured.image[paper].std() > 3
    lit = render(_with("illumination", "{min: 0.3, max: 0.3}"))
    lit_paper = lit.image[paper].astype(float)
    assert lit.artefacts == ("illumination",) and lit_paper.max() - lit_paper.min() > 20
    noisy = render(_params(*SOLID, "synthesize.noise_std=20"))
    assert noisy.artefacts == ("noise",) and noisy.image[paper].std() > 3
    blurred = render(_with("blur", "{min: 0.3, max: 0.3}"))
    levels = np.abs(np.diff(blurred.image.astype(int), axis=1)).sum()
    assert levels < np.abs(np.diff(plain.image.astype(int), axis=1)).sum() and (blurred.mask == plain.mask).all()
    specks = render(_with("speckle", "{min: 0.01, max: 0.01}"))
    assert ((specks.image < 100) & paper).sum() > 300 and ((plain.image < 100) & paper).sum() == 0
    skewed = render(_with("skew", "{min: 0.8, max: 0.8}"))
    angle = skewed.calibration.skew_deg
    assert abs(angle) == 0.8 and skewed.calibration.to_dict()["skew"]["angle_deg"] == angle
    # The first curve's mean row per column moves by the recorded skew offset.
    offset = skewed.calibration.skew_offset(np.arange(1024))
    both = (plain.curves == 1).any(axis=0) & (skewed.curves == 1).any(axis=0)
    ys = np.arange(128)[:, None]
    mean_rows = [((m == 1) * ys).sum(axis=0)[both] / (m == 1).sum(axis=0)[both]
                 for m in (plain.curves, skewed.curves)]
    assert both.mean() > 0.5 and np.abs(offset).max() > 5
    assert np.median(np.abs(mean_rows[1] - mean_rows[0] - offset[both])) <= 1.0
    fax = render(_with("bilevel", "{min: 128, max: 128}"))
    assert set(np.unique(fax.image)) == {0, 255} and (fax.image[fax.mask > 0] == 0).all()


def test_jpeg_leaves_8x8_blocks(wells: list[Well]) -> None:
    params = _params(*CLEAN, "synthesize.noise_std=10", "synthesize.artefacts.jpeg.share=1",
                     "synthesize.artefacts.jpeg.strength={min: 10, max: 10}")
    coded = render_instance(9, 0, params, wells, 2, size=(128, 1024))
    raw = render_instance(9, 0, _params(*CLEAN, "synthesize.noise_std=10"), wells, 2, size=(128, 1024))
    assert coded.artefacts == ("noise", "jpeg")

    def block_edge_ratio(image: np.ndarray) -> float:
        steps = np.abs(np.diff(image.astype(float), axis=1)).mean(axis=0)
        at_edges = np.arange(steps.size) % 8 == 7
        return float(steps[at_edges].mean() / steps[~at_edges].mean())

    assert block_edge_ratio(coded.image) > 1.3 > block_edge_ratio(raw.image)


def test_banks_are_fixed_per_process() -> None:
    first = artefacts.noise_bank()[:1000].copy()
    artefacts.noise_bank.cache_clear()
    assert (artefacts.noise_bank()[:1000] == first).all()
    assert abs(float(artefacts.noise_bank()[:100_000].std()) - artefacts.BANK_UNIT) < 1.0


@pytest.mark.parametrize(("scale", "top", "bottom"), [("linear", 0.0, 150.0), ("log", 0.2, 2000.0),
                                                      ("linear", 150.0, 0.0), ("log", 2000.0, 0.2)])
def test_calibration_wrap_round_trip(tmp_path: Path, scale: str, top: float, bottom: float) -> None:
    sidecar = {"depth": {"top": 1000.0, "bottom": 1250.0, "unit": "FT"},
               "curves": [{"mnemonic": "C", "unit": "U", "top_value": top, "bottom_value": bottom, "scale": scale,
                           "backup": {"mode": "wrap", "max_wraps": 1}}],
               "skew": {"angle_deg": -0.7, "pivot_column": 300.5}}
    calibration = Calibration.from_dict(sidecar)
    calibration.write(tmp_path / "a.calib.json")
    assert Calibration.from_file(tmp_path / "a.calib.json") == calibration
    assert calibration.to_dict()["curves"][0]["backup"] == {"mode": "wrap", "max_wraps": 1}
    # Fractions from -1 to 2 (one backup each way) come back exactly; beyond them the row pegs at the edge.
    # (Within half a pixel of an edge the row is clipped to the edge pixel's centre, so those are left out.)
    fractions = np.concatenate([np.linspace(k + 0.01, k + 0.99, 50) for k in (-1, 0, 1)])
    values = calibration.curves[0].fraction_to_value(fractions)
    rows, wraps = calibration.value_to_drawn_row(values, 100, 0)
    assert set(np.unique(wraps)) == {-1, 0, 1} and (rows >= 0).all() and (rows <= 99).all()
    np.testing.assert_allclose(calibration.row_to_value(rows, 100, 0, wraps), values, rtol=1e-9)
    beyond = calibration.curves[0].fraction_to_value(np.array([-1.5, 2.5]))
    pegged, beyond_wraps = calibration.value_to_drawn_row(beyond, 100, 0)
    assert pegged.tolist() == [0.0, 99.0] and beyond_wraps.tolist() == [-1, 1]
    columns = np.arange(600)
    image_rows = rows[:1] + calibration.skew_offset(columns)
    np.testing.assert_allclose(calibration.image_rows_to_track(image_rows, columns), rows[0])
    assert calibration.skew_offset(np.array([300.5]))[0] == 0.0 and calibration.skew_offset(np.array([600]))[0] < -3


def test_calibration_without_extensions_reads_and_writes_as_before() -> None:
    plain = {"depth": {"top": 1.0, "bottom": 2.0, "unit": "M"},
             "curves": [{"mnemonic": "GR", "unit": "GAPI", "top_value": 0.0, "bottom_value": 150.0, "scale": "linear"}],
             "well": {}}
    calibration = Calibration.from_dict(plain)
    assert calibration.curves[0].backup_wraps == 0 and calibration.skew_deg == 0.0
    assert calibration.to_dict() == plain
    rows, wraps = calibration.value_to_drawn_row(np.array([-75.0, 75.0, 300.0]), 100, 0)
    assert rows.tolist() == [0.0, 49.5, 99.0] and not wraps.any()
    for bad in ({"mode": "clip"}, "wrap"):
        with pytest.raises(CalibrationError, match="backup"):
            Calibration.from_dict({**plain, "curves": [{**plain["curves"][0], "backup": bad}]}, source="x.calib.json")
    with pytest.raises(CalibrationError, match="skew"):
        Calibration.from_dict({**plain, "skew": {"angle_deg": 60.0, "pivot_column": 0.0}})
