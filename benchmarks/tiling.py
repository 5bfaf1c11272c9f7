"""Our tiled inference (`reading.predict`) against MONAI's `sliding_window_inference`, on one full-size strip.

    python benchmarks/tiling.py [--repeats 2] [--out DIR]

Both run the same net (the `cpu` profile's architecture, seeded weights) over one 640 x 12,800
strip in 2,048-column windows with 128 columns of overlap, the evaluate/infer tiling:

- ours: tiles along depth only, each padded with paper to a multiple of 32 and passed with its
  validity mask (so the attention never attends padding), stitched by centre crop (each column
  from the one tile where it lies farthest from a cut edge; no blending);
- MONAI: `sliding_window_inference(roi_size=(640, 2048), overlap=128/2048)`, once with constant
  and once with Gaussian blending of the overlaps, the predictor returning softmax probabilities.

Recorded: wall seconds (median of `--repeats` after a warm-up), the largest difference in any
probability and the share of pixels whose most likely class differs from ours, and, for a per-pixel
net (a 1x1 convolution, whose output cannot depend on tiling), whether each method equals one
untiled pass. Writes `tiling.json` and `tiling.md` into `--out` (default: `results/` beside this file).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from _record import load_note, machine, markdown_table, write_results
from monai.inferers import sliding_window_inference
from torch import nn

from veernet_pipeline.config import load_settings
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.model.veernet import build_model
from veernet_pipeline.reading.predict import logits_to_probs, predict_probs

PARAMS = Path(__file__).resolve().parents[1] / "params.yaml"
HEIGHT, WIDTH, TILE, OVERLAP = 640, 12_800, 2048, 128


def _strip(seed: int) -> np.ndarray:
    """A scan-like strip: paper with a few dark sine traces and a grid, so the net sees ink."""
    rng = np.random.default_rng(seed)
    image = rng.normal(235, 6, size=(HEIGHT, WIDTH)).clip(0, 255).astype(np.uint8)
    image[:, ::50] = 120
    image[::64, :] = 140
    cols = np.arange(WIDTH)
    for k in range(3):
        rows = (HEIGHT / 2 + HEIGHT / 3 * np.sin(cols / rng.uniform(80, 400) + k)).astype(int)
        image[rows, cols] = 10
    return image


def _monai(model: nn.Module, image: np.ndarray, mode: str) -> np.ndarray:
    x = torch.from_numpy(image).float().div(255.0)[None, None]
    with torch.inference_mode():
        out = sliding_window_inference(x, (image.shape[0], TILE), 1, lambda t: logits_to_probs(model(t)),
                                       overlap=OVERLAP / TILE, mode=mode, padding_mode="constant", cval=1.0)
    return out[0].numpy()


def _timed(func: Any, repeats: int) -> tuple[float, Any]:
    result = func()
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = func()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds), result


class PerPixel(nn.Module):
    """A 1x1 convolution to 3 classes: its output at a pixel depends on that pixel only."""

    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Conv2d(1, 3, kernel_size=1)
        torch.nn.init.normal_(self.head.weight, std=4.0, generator=torch.Generator().manual_seed(0))

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        return self.head(x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = parser.parse_args()
    load_before = os.getloadavg()
    settings = load_settings(PARAMS, profile="cpu")
    torch.manual_seed(settings.seed)
    model = build_model(settings.model, NUM_CLASSES).eval()
    image = _strip(settings.seed)

    ours_s, ours = _timed(lambda: predict_probs(model, image, TILE, OVERLAP), args.repeats)
    rows: list[dict[str, Any]] = [{"method": "ours (centre crop, validity mask)", "seconds": ours_s,
                                   "max_prob_diff": 0.0, "argmax_differs": 0.0}]
    for mode in ("constant", "gaussian"):
        seconds, probs = _timed(lambda mode=mode: _monai(model, image, mode), args.repeats)
        rows.append({"method": f"MONAI sliding_window_inference ({mode})", "seconds": seconds,
                     "max_prob_diff": float(np.abs(probs - ours).max()),
                     "argmax_differs": float((probs.argmax(0) != ours.argmax(0)).mean())})

    per_pixel = PerPixel().eval()
    small = image[:, :5000]
    with torch.inference_mode():
        whole = logits_to_probs(per_pixel(torch.from_numpy(small).float().div(255.0)[None, None]))[0].numpy()
    exact = {"ours": bool(np.allclose(predict_probs(per_pixel, small, TILE, OVERLAP), whole, atol=1e-6)),
             "monai_constant": bool(np.allclose(_monai(per_pixel, small, "constant"), whole, atol=1e-6))}

    document = {"machine": machine(load_before), "strip": [HEIGHT, WIDTH], "tile": TILE, "overlap": OVERLAP,
                "threads": torch.get_num_threads(), "rows": rows, "per_pixel_net_equals_untiled": exact}
    table = markdown_table(["method", "seconds", "max |prob diff| vs ours", "argmax differs"],
                           [[r["method"], f"{r['seconds']:.2f}", f"{r['max_prob_diff']:.3g}",
                             f"{r['argmax_differs']:.2%}"] for r in rows], right={1, 2, 3})
    body = (f"One {HEIGHT} x {WIDTH:,} strip, `cpu` profile architecture (seeded, untrained), {TILE}-column "
            f"windows with {OVERLAP} columns of overlap, {torch.get_num_threads()} threads; median of "
            f"{args.repeats} after a warm-up.\n\n{table}\nA per-pixel net equals one untiled pass: ours "
            f"{exact['ours']}, MONAI (constant) {exact['monai_constant']}.\n\n{load_note(document['machine'])}\n")
    write_results(args.out, "tiling", document, "Tiled inference: ours vs MONAI sliding_window_inference", body)


if __name__ == "__main__":
    main()
