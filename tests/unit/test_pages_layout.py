"""The page layout contract: a valid layout parses, and every way a file can be wrong is a LayoutError naming it."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from veernet_pipeline.pages.layout import (
    TRANCHE_LAYOUT,
    LayoutError,
    load_layout,
    parse_layout,
    placeholders,
    read_layout,
)


def example() -> dict[str, Any]:
    """The docs/pages.md example, shrunk: two tracks, a depth column between, main and repeat sections."""
    return {
        "page": {"width": 1664, "height": 17864},
        "tracks": [
            {"name": "T1", "left": 40, "right": 537, "curves": [
                {"mnemonic": "GR", "unit": "GAPI", "left_value": 0, "right_value": 150, "style": "solid"},
                {"mnemonic": "SP", "unit": "MV", "left_value": -100, "right_value": 50, "style": "dashed"}]},
            {"name": "T2", "left": 640, "right": 1636, "curves": [
                {"mnemonic": "ILD", "unit": "OHMM", "left_value": 0.2, "right_value": 2000, "scale": "log",
                 "backup": {"mode": "wrap", "max_wraps": 1}}]},
        ],
        "depth_column": {"left": 537, "right": 640},
        "sections": [
            {"name": "main", "kind": "main", "top_row": 1500, "bottom_row": 14000,
             "depth": {"unit": "FT", "points": [{"row": 1600, "depth": 3000}, {"row": 13600, "depth": 4200}]}},
            {"name": "repeat", "kind": "repeat", "top_row": 15000, "bottom_row": 17500,
             "depth": {"unit": "FT", "points": [{"row": 15100, "depth": 4000}, {"row": 17100, "depth": 4200}]}},
        ],
        "skip": [{"kind": "header", "top_row": 0, "bottom_row": 1400},
                 {"kind": "banner", "top_row": 14200, "bottom_row": 14900}],
        "well": {"WELL": "D&K HEINEN 1-4", "UWI": "15-131-20215", "ELEV": 1843},
    }


def test_the_example_parses_and_its_depth_line_goes_through_the_points() -> None:
    layout = parse_layout(example())
    main = layout.sections[0]
    np.testing.assert_allclose(main.depth.depth_at([1600, 13600, 7600]), [3000, 4200, 3600])
    assert layout.well_items()["ELEV"] == "1843"
    assert [t.name for t in layout.tracks] == ["T1", "T2"]


def test_more_than_two_depth_points_fit_a_least_squares_line() -> None:
    data = example()
    # Rows 0, 100, 200 at depths 0, 11, 20. By the normal equations: mean row 100, mean depth 31/3,
    # slope (100 * 31/3 + 100 * 29/3) / 20000 = 0.1, intercept 31/3 - 0.1 * 100 = 1/3.
    data["sections"][0]["depth"]["points"] = [{"row": 0, "depth": 0}, {"row": 100, "depth": 11},
                                              {"row": 200, "depth": 20}]
    intercept, slope = parse_layout(data).sections[0].depth.line()
    assert slope == pytest.approx(0.1) and intercept == pytest.approx(1 / 3)


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(data: dict[str, Any]) -> None:
        *parents, last = path.split("/")
        node: Any = data
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if isinstance(node, list):
            node[int(last)] = value
        elif value is _DELETE:
            del node[last]
        else:
            node[last] = value
    return apply


_DELETE = object()

BAD: list[tuple[str, Callable[[dict[str, Any]], None], list[str]]] = [
    ("list where an object belongs", _set("tracks/0", [1, 2]), ["tracks[0]", "valid dictionary"]),
    ("string where a number belongs", _set("tracks/0/left", "40"), ["tracks[0].left", "valid integer"]),
    ("missing key", _set("tracks/0/curves/0/left_value", _DELETE), ["tracks[0].curves[0].left_value", "required"]),
    ("missing sections", _set("sections", _DELETE), ["sections", "required"]),
    ("unknown key", _set("sections/0/depht", 1), ["sections[0].depht", "not permitted"]),
    ("NaN depth", _set("sections/0/depth/points/0/depth", float("nan")),
     ["sections[0].depth.points[0].depth", "finite"]),
    ("infinite value", _set("tracks/1/curves/0/right_value", float("inf")),
     ["tracks[1].curves[0].right_value", "finite"]),
    ("equal rows", _set("sections/0/depth/points/1/row", 1600), ["sections[0].depth", "share a row"]),
    ("equal depths", _set("sections/0/depth/points/1/depth", 3000), ["sections[0].depth", "every depth is 3000"]),
    ("one depth point", _set("sections/0/depth/points", [{"row": 1, "depth": 2}]),
     ["sections[0].depth.points", "at least 2"]),
    ("empty track", _set("tracks/0/right", 40), ["tracks[0]", "left (40) must be less than right (40)"]),
    ("negative column", _set("tracks/0/left", -3), ["tracks[0].left", "greater than or equal to 0"]),
    ("tracks overlap", _set("tracks/1/left", 500), ["tracks[0] (T1) and tracks[1] (T2) overlap"]),
    ("track past the page", _set("tracks/1/right", 1700), ["tracks[1] (T2) ends at column 1700", "page width 1664"]),
    ("depth column over a track", _set("depth_column/left", 500), ["overlap", "depth_column"]),
    ("sections overlap", _set("sections/1/top_row", 13000), ["sections[0] (main) and", "sections[1] (repeat)"]),
    ("skip band over a section", _set("skip/1/top_row", 13900), ["sections[0] (main) and skip[1] (banner) overlap"]),
    ("section past the page", _set("sections/1/bottom_row", 18000), ["sections[1] (repeat) ends at row 18000"]),
    ("equal edge values", _set("tracks/0/curves/0/right_value", 0), ["tracks[0].curves[0]", "both 0"]),
    ("log scale through zero", _set("tracks/1/curves/0/left_value", 0), ["tracks[1].curves[0]", "positive"]),
    ("unknown scale", _set("tracks/0/curves/0/scale", "sqrt"), ["tracks[0].curves[0].scale", "'linear' or 'log'"]),
    ("unknown style", _set("tracks/0/curves/0/style", "wavy"), ["tracks[0].curves[0].style"]),
    ("unknown pen", _set("tracks/0/curves/0/colour", "teal"), ["tracks[0].curves[0].colour", "#rrggbb"]),
    ("bad backup", _set("tracks/1/curves/0/backup", {"mode": "peg"}), ["tracks[1].curves[0].backup.mode"]),
    ("same mnemonic twice", _set("tracks/1/curves/0/mnemonic", "gr"), ["curve mnemonics", "GR appear more than once"]),
    ("reserved mnemonic", _set("tracks/0/curves/0/mnemonic", "GR_CONF"), ["tracks[0].curves[0]", "rename"]),
    ("same section name", _set("sections/1/name", "main"), ["sections: main appear"]),
    ("section name unfit for a file name", _set("sections/1/name", "re/peat"), ["sections[1].name"]),
    ("unknown section kind", _set("sections/1/kind", "extra"), ["sections[1].kind"]),
    ("skew too large", _set("skew", {"angle_deg": 12.0}), ["skew.angle_deg", "less than 5"]),
    ("well value a list", _set("well/WELL", ["a"]), ["well.WELL"]),
]


@pytest.mark.parametrize(("case", "mutate", "fragments"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_layout_file_is_a_layout_error_naming_the_file_and_field(
        tmp_path: Path, case: str, mutate: Callable[[dict[str, Any]], None], fragments: list[str]) -> None:
    data = copy.deepcopy(example())
    mutate(data)
    path = tmp_path / "scan.tif.layout.json"
    # json.dumps writes NaN / Infinity literals, which Python's json (and so a careless editor) reads back.
    path.write_text(json.dumps(data))
    with pytest.raises(LayoutError) as raised:
        read_layout(path)
    message = str(raised.value)
    assert message.startswith(str(path)), message
    for fragment in fragments:
        assert fragment in message, f"{case}: {fragment!r} not in {message!r}"


def test_placeholders_left_are_listed_by_field(tmp_path: Path) -> None:
    data = example()
    data["sections"][0]["depth"]["points"][1]["depth"] = None
    data["tracks"][1]["curves"][0]["mnemonic"] = None
    assert placeholders(data) == ["tracks[1].curves[0].mnemonic", "sections[0].depth.points[1].depth"]
    path = tmp_path / "draft.layout.json"
    path.write_text(json.dumps(data))
    with pytest.raises(LayoutError, match=r"2 placeholder\(s\) still null; fill in tracks\[1\].curves\[0\].mnemonic, "
                                          r"sections\[0\].depth.points\[1\].depth"):
        read_layout(path)


@pytest.mark.parametrize(("content", "fragment"), [
    (b"\xff\xfe{\x00}", "not UTF-8"),
    (b'{"tracks": [', "not valid JSON"),
    (b"[1, 2]", "<top level>: Input should be a valid dictionary"),
    (b"", "not valid JSON"),
])
def test_unreadable_layout_files(tmp_path: Path, content: bytes, fragment: str) -> None:
    path = tmp_path / "tranche.layout.json"
    path.write_bytes(content)
    with pytest.raises(LayoutError, match=str(path)) as raised:
        read_layout(path)
    assert fragment in str(raised.value)


def test_a_missing_file_is_a_layout_error(tmp_path: Path) -> None:
    with pytest.raises(LayoutError, match="cannot read the layout"):
        read_layout(tmp_path / "nothing.layout.json")


def test_a_scans_own_file_overrides_the_tranche_key_by_key(tmp_path: Path) -> None:
    data = example()
    tranche = {"tracks": data["tracks"], "sections": [], "well": {"COMP": "KGS"}}
    own = {"sections": data["sections"], "skip": data["skip"], "well": data["well"]}
    (tmp_path / TRANCHE_LAYOUT).write_text(json.dumps(tranche))
    scan = tmp_path / "well7.tif"
    with pytest.raises(LayoutError, match=r"tranche.layout.json: sections: List should have at least 1 item"):
        load_layout(tmp_path / "other.tif")
    scan.with_name("well7.tif.layout.json").write_text(json.dumps(own))
    layout = load_layout(scan)
    assert layout is not None
    assert [t.name for t in layout.tracks] == ["T1", "T2"] and layout.sections[1].name == "repeat"
    assert "COMP" not in layout.well  # `well` is replaced as a whole, not merged
    assert load_layout(tmp_path / "sub" / "x.tif") is None


def test_a_layout_file_that_is_not_an_object_names_itself_when_merged(tmp_path: Path) -> None:
    (tmp_path / TRANCHE_LAYOUT).write_text("[]")
    with pytest.raises(LayoutError, match=r"tranche.layout.json: the layout must be a JSON object"):
        load_layout(tmp_path / "a.tif")
