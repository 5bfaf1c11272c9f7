"""What the benchmarks that read the net's output on synthetic logs share: their command line and the logs.

`log_parser` gives the common arguments (set, model, split, number of logs, profile, output
folder); `truth_logs` yields the split's logs one at a time with what scoring needs, and
`read_logs` adds the model's style probabilities as `evaluate` computes them, so no benchmark
holds every log's probabilities (a mirrored 640 x 12,800 log's are 230 MB).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from veernet_pipeline.config import Settings
from veernet_pipeline.evaluation.evaluate import select_logs
from veernet_pipeline.evaluation.truth import truth_tracks
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.tiff import decode_scan
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.reading.predict import predict_probs
from veernet_pipeline.reading.styles import as_style_probs, curve_classes, style_labels


def log_parser(description: str, max_logs: int) -> argparse.ArgumentParser:
    """SET_DIR, --model, --split (val), --max-logs (`max_logs`), --profile (cpu) and --out (results/)."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("set_dir", nargs="?", type=Path)
    parser.add_argument("--model", type=Path)
    parser.add_argument("--split", default="val")
    parser.add_argument("--max-logs", type=int, default=max_logs, help="first N logs of the split by id (0 = all)")
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    return parser


@dataclass(frozen=True)
class TruthLog:
    """One synthetic log: its scan, its curves' classes and style words (`style_labels`), their truth (track units).

    `mask` is the path of its true class mask, read only by the benchmarks that need it.
    """

    id: str
    image: np.ndarray
    classes: list[tuple[int, ...]]
    styles: list[str]
    truth: np.ndarray
    mask: Path


def truth_logs(set_dir: Path, split: str, max_logs: int) -> Iterator[TruthLog]:
    """The first `max_logs` logs of `split` (0 = all), decoded one at a time, with progress."""
    for row in tqdm(list(select_logs(set_dir, split, max_logs).itertuples(index=False)), desc="logs"):
        calibration = Calibration.from_file(set_dir / row.calibration)
        n_curves = min(int(row.n_curves), len(calibration.curves))
        image = decode_scan(set_dir / row.image)
        styles = [c.style for c in calibration.curves]
        yield TruthLog(row.id, image, curve_classes(styles)[:n_curves], style_labels(styles)[:n_curves],
                       truth_tracks(set_dir / row.las, calibration, image.shape[1], n_curves, image.shape[0]),
                       set_dir / row.mask)


def chosen_set(args: argparse.Namespace, settings: Settings) -> Path:
    """The set `log_parser`'s SET_DIR names, else the profile's multiclass set."""
    return args.set_dir or settings.path("synthetic") / "multiclass"


def read_logs(args: argparse.Namespace, settings: Settings) -> Iterator[tuple[TruthLog, np.ndarray]]:
    """The logs `log_parser`'s arguments name, each with its style probabilities as `evaluate` computes them.

    The set is `chosen_set`'s, the model defaults to the profile's multiclass model; tiles and
    test-time mirroring are the profile's, on the CPU.

    Shape:
        Yields probabilities (7, H, W) on the style classes (`reading.styles.as_style_probs`).
    """
    set_dir = chosen_set(args, settings)
    model = load_model(args.model or settings.path("models") / "multiclass", map_location="cpu")
    for log in truth_logs(set_dir, args.split, args.max_logs):
        yield log, as_style_probs(predict_probs(model, log.image, settings.evaluate.tile_width,
                                                settings.evaluate.tile_overlap, "cpu", mirror=settings.extract.mirror))
