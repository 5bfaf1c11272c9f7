"""Curves drawn alike, read from the true masks: what each identity cue buys, and what a perfect contact rule would.

    python benchmarks/alike.py [SET_DIR] [--split val] [--max-logs 0] [--profile cpu] [--out DIR] [--ghosts N ...]

Two curves of one style cost the same to every style term of the path search, so their identities
rest on five things (docs/reading.md, "The search", items 4 and 8): the path's continuity, ghost
runs that keep a curve's place through its gaps (`reading.ghosts`), the pen cue (`extract.reread_by_height`,
`extract.height_weight`: stroke thickness where it tells the group's pens apart, else run height,
`run_heights.alike_measure`), the slope rule at contacts
(`untangle.untangle`, which asks `untangle.crossed` at every contact that `untangle.jumped`, the
curve that jumped onto the other's line, leaves open) and the rows either side of a
stretch where both are absent (`reading.rejoin`). Every log of the split whose
sidecar names two or more curves in one style is read from its true mask (`mask_probs` of
benchmarks/extract.py, 0.98 on the labelled class: no net, so what is measured is the reading
alone) eight ways:

1. slopes only: `height_weight` 0, the slope rule at contacts;
2. groups re-read by run heights, not pens (as before 2026-12-07; the track's re-read still counts both):
   `alike_measure` always answers run height;
3. pens or run heights, no contact rule: `crossed` answers "not crossed" at every contact;
4. as shipped, without ghost runs: a joint search's absent state forgets where the curve was;
5. as shipped, without rejoining: no pairing of the rows either side of a joint absence;
6. as shipped, without the jump rule: `jumped` decides nothing, the slope rule every contact;
7. as shipped: ghost runs, pens or run heights, the jump and slope rules and rejoining;
8. as shipped with an oracle at contacts the jump rule leaves: `crossed` answers from the truth, swapping the tails
   where the true curve each read curve followed over the 12 columns before the contact is closer
   to the other read curve over the 12 after. It shows what any better contact rule could gain.

With `--ghosts N ...` it also reads as shipped with N ghost runs a column instead of `ghosts.GHOSTS`, one row
each, before the oracle's.

Scored as the evaluate stage scores (`evaluate.score_curves`: best assignment among curves drawn
alike, band truth, swap share). Reported over the curves drawn alike: median and quartile R^2,
the median and mean of the logs' swap share, for the oracle how often it agreed with the slope
rule, and where identities flip (`identity_flips`): jumps across paper, two readings on one line,
contacts, absences. Writes `alike.json` and `alike.md` into `--out` (default: `results/` beside
this script).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
import tifffile
from _record import load_note, machine, markdown_table, write_results
from extract import mask_probs
from tqdm import tqdm

from veernet_pipeline.config import ExtractParams, load_settings
from veernet_pipeline.evaluation.evaluate import score_curves, select_logs
from veernet_pipeline.evaluation.truth import truth_tracks
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.reading import extract, untangle
from veernet_pipeline.reading import ghosts as ghosts_module
from veernet_pipeline.reading.candidates import Candidates
from veernet_pipeline.reading.ghosts import GHOSTS, JointSteps, joint_steps
from veernet_pipeline.reading.run_heights import typical_measure
from veernet_pipeline.reading.styles import as_style_probs, curve_classes

WINDOW = untangle.UNTANGLE_COLUMNS  # columns each side of a contact the oracle compares, as the slope rule does
SLOPE_RULE = untangle.crossed  # kept before any patching: the oracle counts its agreement with it
# Identity flips: a read curve follows a truth where it lies within NEAR_PX of it, in columns where the two
# truths lie more than APART_PX apart; a stretch of one pairing counts when it spans MIN_SPAN columns or more.
NEAR_PX, APART_PX, MIN_SPAN = 3.0, 6.0, 20
FLIP_KINDS = ("jump", "collapse", "contact", "absence")


def alike_logs(set_dir: Path, split: str, max_logs: int) -> list[dict[str, Any]]:
    """The split's logs whose sidecar names two or more curves in one style, with true mask probabilities."""
    logs = []
    for row in select_logs(set_dir, split, max_logs).itertuples(index=False):
        calib = Calibration.from_file(set_dir / row.calibration)
        n_curves = min(int(row.n_curves), len(calib.curves))
        classes = curve_classes([c.style for c in calib.curves])[:n_curves]
        if len(set(classes)) == len(classes):
            continue
        mask = tifffile.imread(set_dir / row.mask)
        height, width = mask.shape
        logs.append({"id": row.id, "height": height, "classes": classes,
                     "truth": truth_tracks(set_dir / row.las, calib, width, n_curves, height),
                     "probs": as_style_probs(mask_probs(mask, NUM_CLASSES))})
    return logs


def identity_flips(rows: np.ndarray, truth_rows: np.ndarray, classes: list[tuple[int, ...]]) -> Counter[str]:
    """Where each pair of curves drawn alike changes which truth it follows, and what the readings did there.

    Between a stretch read straight (each curve on its own truth) and the next stretch read
    crosswise, or back, the columns in between are a flip of one of four kinds, the first that
    holds: `collapse`, both readings on one truth in 3 columns or more; `contact`, the readings
    come within `untangle.CONTACT_PX` (a crossing or touch the reader decided); `absence`, a
    reading is missing (a gap longer than `max_gap`); `jump`, none of these: a reading left its
    line across paper.

    Shape:
        rows, truth_rows: (K, W) pixel rows, `rows` in the truths' curve order (`score_curves`' assignment).
    """
    flips: Counter[str] = Counter()
    with np.errstate(invalid="ignore"):
        on = np.abs(rows[:, None] - truth_rows[None]) <= NEAR_PX  # on[k, t]: read curve k lies on truth t
    for a in range(len(classes)):
        for b in range(a + 1, len(classes)):
            if classes[a] != classes[b]:
                continue
            with np.errstate(invalid="ignore"):
                apart = np.abs(truth_rows[a] - truth_rows[b]) > APART_PX
            straight = on[a, a] & on[b, b] & apart
            crosswise = on[a, b] & on[b, a] & apart
            columns = np.nonzero(straight | crosswise)[0]
            label = straight[columns]
            stretches = [s for s in np.split(np.arange(columns.size), np.nonzero(np.diff(label))[0] + 1)
                         if s.size and columns[s[-1]] - columns[s[0]] >= MIN_SPAN]
            for before, after in zip(stretches[:-1], stretches[1:], strict=False):
                if label[before[0]] == label[after[0]]:
                    continue
                span = slice(columns[before[-1]], columns[after[0]] + 1)
                one_line = int(np.sum(on[a, a, span] & on[b, a, span]) + np.sum(on[a, b, span] & on[b, b, span]))
                with np.errstate(invalid="ignore"):
                    contact = bool(np.any(np.abs(rows[a, span] - rows[b, span]) <= untangle.CONTACT_PX))
                missing = not np.isfinite(rows[[a, b], span]).all()
                flips["collapse" if one_line >= 3 else "contact" if contact else "absence" if missing else "jump"] += 1
    return flips


def no_ghosts(cands: Candidates, params: ExtractParams, height: int, wrap: bool = False) -> JointSteps:
    """`ghosts.joint_steps` with no ghost run anywhere: a joint search's absence forgets where the curve was."""
    steps = joint_steps(cands, params, height, wrap)
    return JointSteps(steps.transition, np.zeros_like(steps.ghosts))


class Oracle:
    """A contact rule that knows the truth: stands in for `untangle.crossed`, counting its agreement with it."""

    def __init__(self) -> None:
        self.truth_rows = np.empty((0, 0))
        self.contacts = 0
        self.agreed = 0

    def follows(self, rows: np.ndarray, k: int, columns: np.ndarray) -> int:
        """The true curve read curve k lies closest to over `columns` (mean absolute rows), -1 if unread there."""
        if not columns.size:
            return -1
        # All-NaN rows (a true curve off the LAS range there) give NaN, warned about, and are never chosen.
        with warnings.catch_warnings(action="ignore", category=RuntimeWarning):
            misfit = np.nanmean(np.abs(self.truth_rows[:, columns] - rows[k, columns]), axis=1)
        return int(np.nanargmin(misfit)) if np.isfinite(misfit).any() else -1

    def __call__(self, rows: np.ndarray, a: int, b: int, first: int, last: int) -> bool:
        before = np.arange(max(0, first - WINDOW), first)
        after = np.arange(last + 1, min(rows.shape[1], last + 1 + WINDOW))
        true_a, true_b = self.follows(rows, a, before), self.follows(rows, b, before)
        if min(true_a, true_b) < 0 or true_a == true_b or not after.size:
            return False
        truth = self.truth_rows[:, after]

        def misfit(k: int, true_k: int) -> float:
            return float(np.nanmean(np.abs(rows[k, after] - truth[true_k])))

        with np.errstate(invalid="ignore"), warnings.catch_warnings(action="ignore", category=RuntimeWarning):
            as_read = misfit(a, true_a) + misfit(b, true_b)
            crosswise = misfit(b, true_a) + misfit(a, true_b)
        crossed = bool(crosswise < as_read)
        self.contacts += 1
        self.agreed += crossed == SLOPE_RULE(rows, a, b, first, last)
        return crossed


def heights_only(cands: Candidates, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`run_heights.alike_measure` that never looks at the pens: every group told apart by its run heights."""
    return cands.height, typical_measure(cands.height, states)


def score_way(logs: list[dict[str, Any]], params: ExtractParams, rule: Callable[..., bool] | None,
              name: str, ghosts: bool = True, rejoin: bool = True, jumps: bool = True,
              ghost_count: int = GHOSTS, pens: bool = True) -> dict[str, Any]:
    """Read every log with `params`, contact rule `rule` (None: slope rule); ghost runs (`ghost_count` a column),
    rejoining, jump rule, pens (stroke thickness) or not.

    Figures over the curves drawn alike, and their identity flips by kind.
    """
    r2, swaps = [], []
    flips: Counter[str] = Counter()
    oracle = rule if isinstance(rule, Oracle) else None
    with (mock.patch.object(untangle, "crossed", rule) if rule is not None else contextlib.nullcontext(),
          mock.patch.object(extract, "joint_steps", no_ghosts) if not ghosts else contextlib.nullcontext(),
          mock.patch.object(extract, "rejoin", lambda *_: None) if not rejoin else contextlib.nullcontext(),
          mock.patch.object(untangle, "jumped", lambda *_: None) if not jumps else contextlib.nullcontext(),
          mock.patch.object(extract, "alike_measure", heights_only) if not pens else contextlib.nullcontext(),
          mock.patch.object(ghosts_module, "GHOSTS", ghost_count)):
        for item in tqdm(logs, desc=name, leave=False):
            truth_rows = item["truth"] * item["height"] - 0.5
            if oracle is not None:
                oracle.truth_rows = truth_rows
            rows, _ = extract.trace_curves(item["probs"], params, item["classes"])
            scores, swap, order = score_curves(rows, item["truth"], item["classes"], item["height"])
            r2 += [s["r2"] for k, s in enumerate(scores) if item["classes"].count(item["classes"][k]) > 1]
            swaps.append(swap)
            flips += identity_flips(rows[order], truth_rows, item["classes"])
    result = {"way": name, "curves": len(r2), "median_r2": float(np.nanmedian(r2)),
              "p25_r2": float(np.nanpercentile(r2, 25)), "p75_r2": float(np.nanpercentile(r2, 75)),
              "median_swap_share": float(np.nanmedian(swaps)), "mean_swap_share": float(np.nanmean(swaps)),
              "flips": {kind: flips[kind] for kind in FLIP_KINDS}}
    if oracle is not None:
        result |= {"contacts": oracle.contacts, "agreement": oracle.agreed / max(oracle.contacts, 1)}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("set_dir", nargs="?", type=Path)
    parser.add_argument("--split", default="val")
    parser.add_argument("--max-logs", type=int, default=0, help="first N logs of the split by id (0 = all)")
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    parser.add_argument("--ghosts", type=int, nargs="*", default=[],
                        help="also read as shipped with each of these numbers of ghost runs a column")
    args = parser.parse_args()
    settings = load_settings(None, args.profile)
    set_dir = args.set_dir or settings.path("synthetic") / "multiclass"
    load_before = os.getloadavg()
    logs = alike_logs(set_dir, args.split, args.max_logs)
    if not logs:
        raise SystemExit(f"no log of split {args.split!r} in {set_dir} names two curves in one style")
    shipped = settings.extract
    slopes_only = shipped.model_copy(update={"height_weight": 0.0})
    ways = [score_way(logs, slopes_only, None, "slopes only (height_weight 0)"),
            score_way(logs, shipped, None, "groups re-read by run heights, not pens", pens=False),
            score_way(logs, shipped, lambda *_: False, "pens or run heights, no contact rule"),
            score_way(logs, shipped, None, "as shipped, without ghost runs", ghosts=False),
            score_way(logs, shipped, None, "as shipped, without rejoining across absences", rejoin=False),
            score_way(logs, shipped, None, "as shipped, without the jump rule at contacts", jumps=False),
            score_way(logs, shipped, None, "as shipped: ghost runs, pens or heights, jump and slope rules, rejoining"),
            score_way(logs, shipped, Oracle(), "as shipped + oracle at contacts")]
    ways[-1:-1] = [score_way(logs, shipped, None, f"as shipped with {count} ghost runs a column (not {GHOSTS})",
                             ghost_count=count) for count in args.ghosts]
    rows = [[w["way"], str(w["curves"]), f"{w['median_r2']:.3f}", f"{w['p25_r2']:.3f}", f"{w['p75_r2']:.3f}",
             f"{100 * w['median_swap_share']:.1f} %", f"{100 * w['mean_swap_share']:.1f} %",
             str(sum(w["flips"].values()))] + [str(w["flips"][kind]) for kind in FLIP_KINDS] for w in ways]
    oracle = ways[-1]
    record = machine(load_before)
    body = (markdown_table(["reading", "curves", "R² median", "R² p25", "R² p75", "swap share median", "mean",
                            "flips", *(f"by {kind}" for kind in FLIP_KINDS)], rows, set(range(1, 12)))
            + f"\n{len(logs)} logs of split `{args.split}` of `{set_dir.name}` that name two or more curves in one "
            f"style, read from their true masks with profile `{args.profile}`'s `extract:` "
            f"(height_weight {shipped.height_weight}). R² over the curves drawn alike; swap share per log. The "
            f"oracle decided {oracle['contacts']} contacts and agreed with the slope rule on "
            f"{100 * oracle['agreement']:.0f} % of them. Flips: places where a pair of curves drawn alike changes "
            f"which truth it follows (stretches of {MIN_SPAN} columns or more, readings within {NEAR_PX:g} px of a "
            f"truth, truths more than {APART_PX:g} px apart): by jump across paper, collapse (both on one line), "
            f"contact, absence (`identity_flips`).\n\n{load_note(record)}\n")
    document = {"set": str(set_dir), "split": args.split, "profile": args.profile, "logs": [x["id"] for x in logs],
                "extract": shipped.model_dump(), "ways": ways, "machine": record}
    write_results(args.out, "alike", document, "Curves drawn alike: identity cues, read from the true masks", body)


if __name__ == "__main__":
    main()
