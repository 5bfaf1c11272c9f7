"""Synthetic sets at scale: candidate accounting, first-valid-by-index, resume, parallel, archive sizes, preview."""

from __future__ import annotations

import os
import signal
import threading
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tifffile
from matplotlib.image import imread

from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.io.classes import STYLES, style_class
from veernet_pipeline.io.sets import INDEX_FILE
from veernet_pipeline.io.splits import instance_splits
from veernet_pipeline.synthetic.checks import LABEL_COVERAGE, LABEL_INVISIBLE, check_candidate, label_reason
from veernet_pipeline.synthetic.curves import load_wells, wells_by_split
from veernet_pipeline.synthetic.dataset import (
    PREVIEW_COLOURS,
    PREVIEW_TITLE_PX,
    REJECTIONS_FILE,
    SET_SEED_OFFSETS,
    curve_count,
    preview_sheet,
    synthesize_sets,
)
from veernet_pipeline.synthetic.generate import _runner
from veernet_pipeline.synthetic.render import render_instance
from veernet_pipeline.synthetic.sizes import draw_size
from veernet_pipeline.training.data import SegmentationSet

PARAMS = Path(__file__).parents[2] / "params.yaml"
# Validation narrower than the test profile's sizes (width 320-640), so about half the candidates fail it.
NARROW = "validate.width={min: 320, max: 480}"
# Renders whose curves run solid, dark and unhidden across the track: no pen skips, faded stretches,
# header boxes, flags or banners, every curve solid. Such a candidate can only fail a size bound.
CLEAN = ("synthesize.gaps.share=0", "synthesize.fades.share=0", "synthesize.text.headers_per_10k=0",
         "synthesize.flags.per_10k=0", "synthesize.banners.per_10k=0",
         "synthesize.styles={solid: 1, dashed: 0, dotted: 0, dash_dot: 0, long_dash: 0}")


def _settings(folder: Path, *overrides: str) -> Settings:
    return load_settings(PARAMS, profile="test", overrides=[
        f"paths.synthetic={folder / 'synthetic'}", f"paths.validated={folder / 'validated'}",
        "synthesize.binary_count=2", *overrides])


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_keeps_the_first_valid_candidates_and_accounts_for_every_one(tmp_path: Path) -> None:
    settings = _settings(tmp_path, NARROW, *CLEAN, "synthesize.multiclass_count=4",
                         "synthesize.multiclass_generated=12")
    counts = synthesize_sets(settings)

    # Expected by hand: clean renders break no label rule, so a candidate is rejected exactly when its
    # width is over NARROW's 480 px. Each is rendered alone from (seed, i) to read its width.
    params, seed = settings.synthesize, settings.seed + SET_SEED_OFFSETS["multiclass"]
    pools = wells_by_split(load_wells(""), params.splits, settings.seed)
    splits = instance_splits(12, params.splits, seed)
    widths = [render_instance(seed, i, params, pools[splits[i]], curve_count(seed, i, params.curves_per_track))
              .image.shape[1] for i in range(12)]
    valid = [i for i, width in enumerate(widths) if width <= 480]
    rendered = valid[3] + 1  # candidates are rendered in order until the fourth valid one
    assert counts["multiclass_candidates"] == {"generated": 12, "rendered": rendered, "reused": 0, "kept": 4,
                                               "rejected": rendered - 4, "not_needed": 12 - rendered}
    set_dir = settings.path("synthetic") / "multiclass"
    index = pd.read_parquet(set_dir / INDEX_FILE)
    assert list(index.id) == [f"{i:06d}" for i in valid[:4]]
    rejections = pd.read_parquet(set_dir / REJECTIONS_FILE)
    expected_rejected = [f"{i:06d}" for i in range(rendered) if i not in valid]
    assert expected_rejected and list(rejections.id) == expected_rejected
    assert set(rejections.reason_code) == {"width_out_of_range"}
    assert list(rejections.width) == [widths[i] for i in range(rendered) if i not in valid]
    assert all("outside 320-480" in reason for reason in rejections.reason)
    # A rejected candidate leaves only its record; a not-needed one was never rendered.
    assert not (set_dir / f"{expected_rejected[0]}.tif").exists()
    assert (set_dir / f"{expected_rejected[0]}.record.json").is_file()
    assert not any(set_dir.glob("000011.*"))


def test_candidate_verdicts_known_by_construction(tmp_path: Path) -> None:
    settings = _settings(tmp_path, NARROW, *CLEAN)
    wells = load_wells("")
    # 100 x 400 px is inside NARROW (width 320-480) and the test profile's height (96-192).
    clean = render_instance(settings.seed, 0, settings.synthesize, wells, 2, size=(100, 400))
    bounds = settings.validate_
    assert check_candidate("000000", clean, bounds).reason_code == ""

    wide = render_instance(settings.seed, 1, settings.synthesize, wells, 2, size=(100, 600))
    verdict = check_candidate("000001", wide, bounds)
    assert verdict.reason_code == "width_out_of_range"
    assert verdict.reason.startswith("000001.tif: width 600 px is outside 320-480")
    short = render_instance(settings.seed, 2, settings.synthesize, wells, 2, size=(90, 400))
    assert check_candidate("000002", short, bounds).reason_code == "height_out_of_range"

    # A header box over columns 80-399 blanks ink and labels there: the first curve (checked first)
    # keeps labels in at most 80 of 400 columns, 20 %, under the 25 % coverage rule.
    image, mask, curves = clean.image.copy(), clean.mask.copy(), clean.curves.copy()
    image[:, 80:], mask[:, 80:], curves[:, 80:] = 255, 0, 0
    verdict = check_candidate("000003", replace(clean, image=image, mask=mask, curves=curves), bounds)
    assert verdict.reason_code == LABEL_COVERAGE and "curve 1 " in verdict.reason

    flat = replace(clean.calibration, depth_bottom=clean.calibration.depth_top)
    verdict = check_candidate("000004", replace(clean, calibration=flat), bounds)
    assert verdict.reason_code == "bad_calibration" and "depth: top and bottom are both" in verdict.reason


def test_label_rule_rejects_hidden_and_invisible_curves() -> None:
    image = np.full((40, 100), 240, dtype=np.uint8)
    mask = np.zeros((40, 100), dtype=np.uint8)
    mask[10, :] = 1
    mask[30, :60] = 2
    image[mask > 0] = 20
    assert label_reason("a.tif", image, mask, 2) is None
    hidden = mask.copy()
    hidden[30, 20:] = 0  # curve B labels 20 % of the columns
    code, message = label_reason("a.tif", image, hidden, 2)
    assert code == LABEL_COVERAGE and "a.tif" in message and "curve 2 " in message
    washed = image.copy()
    washed[10, :70] = 230  # 70 % of curve A's labels sit on near-paper gray
    code, message = label_reason("a.tif", washed, mask, 2)
    assert code == LABEL_INVISIBLE and "curve 1'" in message


def test_too_few_valid_candidates_fail_with_a_fix(tmp_path: Path) -> None:
    settings = _settings(tmp_path, "validate.width={min: 320, max: 330}")
    with pytest.raises(ValueError, match="raise synthesize.multiclass_generated") as caught:
        synthesize_sets(settings)
    assert REJECTIONS_FILE in str(caught.value) and "width_out_of_range" in str(caught.value)
    set_dir = settings.path("synthetic") / "multiclass"
    assert len(pd.read_parquet(set_dir / REJECTIONS_FILE)) > 2
    assert not (set_dir / INDEX_FILE).exists()


def test_resume_renders_only_what_is_missing(tmp_path: Path) -> None:
    settings = _settings(tmp_path, NARROW, "synthesize.multiclass_count=4", "synthesize.multiclass_generated=10")
    first = synthesize_sets(settings)
    root = settings.path("synthetic")
    before = _files(root)
    set_dir = root / "multiclass"
    kept = list(pd.read_parquet(set_dir / INDEX_FILE).id)
    # An interruption: the index never written, one kept instance lost its image, another its record.
    (set_dir / INDEX_FILE).unlink()
    (set_dir / f"{kept[1]}.tif").unlink()
    (set_dir / f"{kept[3]}.record.json").unlink()
    untouched = set_dir / f"{kept[0]}.tif"
    mtime = untouched.stat().st_mtime_ns

    again = synthesize_sets(settings)
    assert again["multiclass_candidates"]["rendered"] == 2
    assert again["multiclass_candidates"]["reused"] == first["multiclass_candidates"]["rendered"] - 2
    assert again["binary_candidates"] == {**first["binary_candidates"], "rendered": 0, "reused": 2}
    assert untouched.stat().st_mtime_ns == mtime
    assert _files(root) == before


def test_the_binary_stage_trains_on_every_rendered_curve_pixel(tmp_path: Path) -> None:
    # The binary set is loaded as the binary stage loads it, and its targets must be exactly the
    # curve-style pixels of each instance rendered again here from (seed, i): a binary set whose curves
    # the loader cannot see (masks and loader disagreeing on the label space) trains a net on empty targets.
    settings = _settings(tmp_path, "synthesize.multiclass_count=2", "synthesize.multiclass_generated=2")
    synthesize_sets(settings)
    set_dir = settings.path("synthetic") / "binary"
    params, seed = settings.synthesize, settings.seed + SET_SEED_OFFSETS["binary"]
    pools = wells_by_split(load_wells(""), params.splits, settings.seed)
    for index, split in enumerate(instance_splits(2, params.splits, seed)):
        log = render_instance(seed, index, params, pools[split], curve_count(seed, index, params.curves_per_track))
        expected = np.isin(log.mask, [style_class(style) for style in STYLES])
        data = SegmentationSet(set_dir, split, binary=True, crop_width=0, seed=0, max_items=0)
        target = data[list(data.rows.id).index(f"{index:06d}")]["target"].numpy()
        assert expected.sum() > 0
        np.testing.assert_array_equal(target, expected)


def test_changed_params_make_recorded_candidates_stale(tmp_path: Path) -> None:
    budget = "synthesize.multiclass_generated=14"  # room for one more kept candidate below
    synthesize_sets(_settings(tmp_path, budget))
    changed = _settings(tmp_path, budget, "synthesize.noise_std=2.0")
    counts = synthesize_sets(changed)
    assert counts["multiclass_candidates"]["reused"] == 0 and counts["binary_candidates"]["reused"] == 0
    more = synthesize_sets(_settings(tmp_path, budget, "synthesize.noise_std=2.0", "synthesize.multiclass_count=11"))
    assert more["multiclass_candidates"]["reused"] == counts["multiclass_candidates"]["rendered"]
    assert more["multiclass"] != counts["multiclass"]


def test_parallel_workers_write_the_same_bytes_as_one(tmp_path: Path) -> None:
    overrides = ("synthesize.multiclass_count=4", "synthesize.multiclass_generated=5")
    serial = _settings(tmp_path / "serial", *overrides, "synthesize.workers=1")
    parallel = _settings(tmp_path / "parallel", *overrides, "synthesize.workers=2")
    assert synthesize_sets(serial)["multiclass"] == synthesize_sets(parallel)["multiclass"]
    assert _files(serial.path("synthetic")) == _files(parallel.path("synthetic"))


class DiesOnSecond:
    """A maker whose worker is killed (as the OOM killer would) while making candidate 1."""

    def prepare(self) -> None:
        """Nothing to load."""

    def __call__(self, index: int) -> int:
        if index == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        return index


def test_a_worker_killed_mid_task_fails_the_set_instead_of_hanging() -> None:
    outcome: dict[str, BaseException | list[int]] = {}

    def run() -> None:
        with ExitStack() as stack:
            try:
                outcome["made"] = list(_runner(stack, DiesOnSecond(), 2)([0, 1, 2]))
            except BrokenProcessPool as exc:
                outcome["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=120)
    # multiprocessing.Pool would wait for the lost task forever: the thread would still be alive here.
    assert not worker.is_alive(), "the pool hung on a dead worker"
    assert isinstance(outcome.get("error"), BrokenProcessPool)


def test_archive_sizes_come_from_the_validated_scans(tmp_path: Path) -> None:
    settings = _settings(tmp_path, "synthesize.size_source=archive", "synthesize.multiclass_count=4",
                         "synthesize.multiclass_generated=12")
    with pytest.raises(FileNotFoundError, match="validated.parquet is missing.*size_source"):
        synthesize_sets(settings)
    # Two sizes inside the validate bounds, one taller than them (an archive scan may be). The third scan
    # is a 300-dpi one, 450 x 750 px as stored: the net reads it, and training draws it, at 300 x 500.
    sizes = pd.DataFrame({"net_height": [100, 128, 300], "net_width": [352, 600, 500]})
    settings.path("validated").mkdir(parents=True)
    sizes.assign(height=[100, 128, 450], width=[352, 600, 750]).to_parquet(
        settings.path("validated") / "validated.parquet")
    synthesize_sets(settings)
    allowed = set(zip(sizes.net_height, sizes.net_width, strict=True))
    drawn = set()
    for name in ("binary", "multiclass"):
        set_dir = settings.path("synthetic") / name
        for frame in (pd.read_parquet(set_dir / INDEX_FILE), pd.read_parquet(set_dir / REJECTIONS_FILE)):
            drawn |= set(zip(frame.height, frame.width, strict=True))
        for row in pd.read_parquet(set_dir / INDEX_FILE).itertuples():
            assert tifffile.imread(set_dir / row.image).shape == (row.height, row.width)
    assert drawn <= allowed and len(drawn) > 1
    rejected = pd.read_parquet(settings.path("synthetic") / "multiclass" / REJECTIONS_FILE)
    assert set(rejected.height) == {300} and set(rejected.reason_code) == {"height_out_of_range"}
    table = sizes.to_numpy()
    assert {draw_size(7, i, table) for i in range(200)} == allowed
    assert draw_size(7, 3, table) == draw_size(7, 3, table) and draw_size(7, 3, None) is None


def test_preview_sheet_shows_native_pixels(tmp_path: Path) -> None:
    settings = _settings(tmp_path, "synthesize.multiclass_count=2", "synthesize.multiclass_generated=2")
    synthesize_sets(settings)
    set_dir = settings.path("synthetic") / "multiclass"
    preview_sheet(set_dir, tmp_path / "sheet.png", n=2, columns=300)
    sheet = np.rint(imread(tmp_path / "sheet.png")[..., :3] * 255).astype(np.uint8)
    first = next(pd.read_parquet(set_dir / INDEX_FILE).itertuples())
    image = tifffile.imread(set_dir / first.image)[:, :300]
    mask = tifffile.imread(set_dir / first.mask)[:, :300]
    height = image.shape[0]
    shown = sheet[PREVIEW_TITLE_PX : PREVIEW_TITLE_PX + height, :300]
    np.testing.assert_array_equal(shown, np.repeat(image[..., None], 3, axis=2))
    overlay = sheet[PREVIEW_TITLE_PX + height : PREVIEW_TITLE_PX + 2 * height, :300]
    shown = 0
    for cls, (_, rgb) in PREVIEW_COLOURS.items():
        assert (overlay[mask == cls] == rgb).all()
        shown += int((mask == cls).sum())
    assert shown == int((mask > 0).sum()) > 0
