"""Does the trained net read the same in bf16 as in fp32? The curves read, not only the pixels.

    python benchmarks/precision.py [SET_DIR] [--model MODEL_DIR] [--split val] [--max-logs 10] [--profile cpu]

The first `--max-logs` logs of the split (validation by default: never the test split) are read
twice with the profile's settings and test-time mirroring as `evaluate` does: the forward passes
in fp32, then under bf16 autocast (`reading.predict.predict_probs(dtype=torch.bfloat16)`). Reported:
the largest probability change and the share of pixels whose most likely class is the same, the
curves' median and p10 R² and median MAE each way, how many curves moved by more than 0.01 R²,
and the seconds of net time each way (bf16 pays only where the CPU has bf16 instructions: the
record names the CPU's, and `reading.predict.inference_dtype` reads in bf16 there). Writes
`precision.json` and `precision.md` into `--out` (default: `results/`).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np
import torch
from _logs import chosen_set, log_parser, truth_logs
from _record import load_note, machine, markdown_table, write_results

from veernet_pipeline.config import load_settings
from veernet_pipeline.evaluation.evaluate import score_curves
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.reading.extract import trace_curves
from veernet_pipeline.reading.predict import CPU_BF16_FEATURES, predict_probs
from veernet_pipeline.reading.styles import as_style_probs

PRECISIONS: dict[str, torch.dtype | None] = {"fp32": None, "bf16": torch.bfloat16}


def read_both(args: argparse.Namespace) -> dict[str, Any]:
    """Every log read in each precision: per-curve R² and MAE, net seconds, and the probabilities' agreement."""
    settings = load_settings(None, args.profile)
    set_dir = chosen_set(args, settings)
    model = load_model(args.model or settings.path("models") / "multiclass", map_location="cpu")
    params, extract = settings.evaluate, settings.extract
    curves: dict[str, list[tuple[float, float]]] = {name: [] for name in PRECISIONS}
    seconds = dict.fromkeys(PRECISIONS, 0.0)
    logs = []
    for log in truth_logs(set_dir, args.split, args.max_logs):
        probs = {}
        for name, dtype in PRECISIONS.items():
            start = time.perf_counter()
            probs[name] = predict_probs(model, log.image, params.tile_width, params.tile_overlap, "cpu",
                                        mirror=extract.mirror, dtype=dtype)
            seconds[name] += time.perf_counter() - start
            rows, _ = trace_curves(as_style_probs(probs[name]), extract, log.classes)
            scores, _, _ = score_curves(rows, log.truth, log.classes, log.image.shape[0])
            curves[name] += [(s["r2"], s["mae"]) for s in scores]
        logs.append({"id": log.id, "max_prob_change": float(np.abs(probs["fp32"] - probs["bf16"]).max()),
                     "argmax_agreement": float((probs["fp32"].argmax(0) == probs["bf16"].argmax(0)).mean())})
    return {"set": str(set_dir), "split": args.split, "profile": args.profile, "logs": logs, "curves": curves,
            "net_seconds": seconds}


def main() -> None:
    args = log_parser(__doc__, 10).parse_args()
    load_before = os.getloadavg()
    document = read_both(args)
    r2 = {name: np.array([c[0] for c in rows]) for name, rows in document["curves"].items()}
    mae = {name: np.array([c[1] for c in rows]) for name, rows in document["curves"].items()}
    moved = np.abs(r2["bf16"] - r2["fp32"])
    rows = [[name, str(len(r2[name])), f"{np.nanmedian(r2[name]):.4f}", f"{np.nanpercentile(r2[name], 10):.3f}",
             f"{np.nanmedian(mae[name]):.5f}", f"{document['net_seconds'][name]:.1f}"] for name in PRECISIONS]
    logs = document["logs"]
    document["machine"] = record = machine(load_before)
    capabilities = torch.cpu.get_capabilities()
    record["bf16_instructions"] = [name for name in CPU_BF16_FEATURES if capabilities.get(name)]
    body = (markdown_table(["precision", "curves", "R² median", "R² p10", "MAE median", "net s"], rows,
                           set(range(1, 6)))
            + f"\n{len(logs)} logs of split `{args.split}`, profile `{args.profile}`, mirrored as `evaluate` reads. "
            f"{int((moved > 0.01).sum())} of {len(moved)} curves moved by more than 0.01 R² (the largest "
            f"{np.nanmax(moved):.3f}). Largest probability change {max(x['max_prob_change'] for x in logs):.3f}; "
            f"pixels whose most likely class is the same: at least "
            f"{100 * min(x['argmax_agreement'] for x in logs):.3f} % per log. The CPU's bf16 instructions: "
            f"{', '.join(record['bf16_instructions']) or 'none (bf16 emulated)'}.\n\n{load_note(record)}\n")
    write_results(args.out, "precision", document, "bf16 against fp32: the trained net's reading", body)


if __name__ == "__main__":
    main()
