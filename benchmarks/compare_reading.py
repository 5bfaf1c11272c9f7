"""Two versions of the reading code on the same logs with one model, judged by the rule models are kept by.

    git worktree add ../before <commit before the change>
    python benchmarks/compare_reading.py --before-code ../before --model MODEL_DIR [--split val] [--max-logs 80]
        [--foreign] [--profile cpu] [--name NAME]

`compare_models.py` holds the code still and changes the model; this holds the model still and changes the code
(the path search, the values). Each version reads the first `--max-logs` logs of `--split` as the evaluate stage
does (`evaluate_model`): this checkout in-process, the `--before-code` checkout in a subprocess with it first on
PYTHONPATH, so its `veernet_pipeline` is the one imported. Both are scored by `compare_models`' figures, the
paired per-curve test and its rule (fixed before any figure is read); each set is also split by whether the
sidecar gives the curve a backup scale. A set already read into `results/tmp/<name>/<version>-<set>/` is not
read again (delete the folder to). With `--foreign` the foreign set is read too: reported, never decided on.
Writes `results/<name>.{json,md}`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
from _record import load_note, machine, write_results
from compare_models import HERE, paired, style_figures, table, verdict

from veernet_pipeline.config import load_settings
from veernet_pipeline.evaluation.evaluate import evaluate_model

# The first thing the other checkout's process does: make sure its `veernet_pipeline` is that checkout's. `python -c`
# puts its working folder first on sys.path, before PYTHONPATH, so run from this checkout it would import this one's.
CHECK_IMPORT = ("import sys; from pathlib import Path; import veernet_pipeline; code = Path(sys.argv.pop(1)); "
                "assert code in Path(veernet_pipeline.__file__).resolve().parents, "
                "f'imported {veernet_pipeline.__file__}, not the checkout {code}'; ")
READ = ("from veernet_pipeline.config import load_settings; "
        "from veernet_pipeline.evaluation.evaluate import evaluate_model; "
        "model, set_dir, out, split, n, params, profile = sys.argv[1:]; s = load_settings(Path(params), profile); "
        "evaluate_model(Path(model), Path(set_dir), Path(out), s.evaluate.model_copy(update={'max_logs': int(n)}), "
        "s.extract, split, seed=s.seed, low_confidence=s.infer.low_confidence)")


def run_with_code(code: Path, script: str, args: list[str]) -> None:
    """Run `script` (`python -c`) with the checkout at `code` as its `veernet_pipeline`: from that checkout's folder
    and with it on PYTHONPATH, after `CHECK_IMPORT` (the process fails if it got another package)."""
    code = code.resolve()
    env = {**os.environ, "PYTHONPATH": str(code)}
    subprocess.run([sys.executable, "-c", CHECK_IMPORT + script, str(code), *args], check=True, env=env, cwd=code)


def read(code: Path | None, model: Path, set_dir: Path, split: str, max_logs: int, settings: Any,
         out: Path) -> pd.DataFrame:
    """Per-log rows of `model` on the set as the code in `code` (None: this checkout) reads it."""
    if not (out / "per_log.csv").exists():
        if code is None:
            params = settings.evaluate.model_copy(update={"max_logs": max_logs})
            evaluate_model(model, set_dir, out, params, settings.extract, split, seed=settings.seed,
                           low_confidence=settings.infer.low_confidence)
        else:
            run_with_code(code, READ, [str(model.resolve()), str(set_dir.resolve()), str(out.resolve()), split,
                                       str(max_logs), str(HERE.parent / "params.yaml"), settings.profile])
    return pd.read_csv(out / "per_log.csv", dtype={"id": str})


def with_backup(frame: pd.DataFrame, set_dir: Path) -> pd.Series:
    """Whether each row's curve has a backup scale in its log's sidecar (curve "A" is the first)."""
    def one(log_id: str, curve: str) -> bool:
        sidecar = json.loads((set_dir / f"{log_id}.calib.json").read_text())
        return "backup" in sidecar["curves"][ord(curve) - ord("A")]
    return pd.Series([one(i, c) for i, c in zip(frame["id"], frame["curve"], strict=True)], index=frame.index)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-code", type=Path, required=True, help="a checkout of the code before the change")
    parser.add_argument("--model", type=Path, required=True, help="model folder (weights.pt + model.json)")
    parser.add_argument("--split", default="val")
    parser.add_argument("--max-logs", type=int, default=80)
    parser.add_argument("--foreign", action="store_true", help="also read the foreign set (reported, never decided)")
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--name", default="compare_reading")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    settings = load_settings(HERE.parent / "params.yaml", profile=args.profile)
    sets = {"own": (settings.path("synthetic") / "multiclass", args.split, args.max_logs)}
    if args.foreign:
        sets["foreign"] = (settings.path("synthetic") / settings.evaluate.foreign, "test", 0)
    document: dict[str, Any] = {"before_code": str(args.before_code), "model": str(args.model),
                                "profile": args.profile, "sets": {}}
    body = ""
    for name, (set_dir, split, max_logs) in sets.items():
        frames = {version: read(code, args.model, set_dir, split, max_logs, settings,
                                args.out / "tmp" / args.name / f"{version}-{name}")
                  for version, code in (("before", args.before_code), ("after", None))}
        figures = {version: style_figures(frame) for version, frame in frames.items()}
        pair = paired(frames["before"], frames["after"])
        entry: dict[str, Any] = {"set": str(set_dir), "split": split, "logs": int(frames["before"]["id"].nunique()),
                                 "figures": figures, "paired": pair, "backup": {}}
        body += f"## {name}: {entry['logs']} logs of {set_dir.name}/{split}\n\n" + table(list(figures.items())) + "\n"
        body += (f"- per curve, MAE lower / higher after: {pair['lower']} / {pair['higher']} (one-sided Wilcoxon: "
                 f"p higher {pair['p_higher']:.3g}, p lower {pair['p_lower']:.3g})")
        if name == "own":
            entry["verdict"] = verdict(figures["before"], figures["after"], pair)
            body += "; the rule: " + "; ".join(f"{c} {'yes' if held else 'no'}" for c, held in entry["verdict"].items())
        body += ".\n"
        both = frames["before"].merge(frames["after"], on=["id", "curve"], suffixes=("_before", "_after"))
        both["backup"] = with_backup(both, set_dir)
        for flag, part in both.groupby("backup"):
            label = "with a backup scale" if flag else "without"
            summary = {"curves": len(part), **{f"{k}_{v}": float(part[f"{k}_{v}"].median())
                                               for k in ("r2", "mae", "coverage") for v in ("before", "after")},
                       "mae_lower": int((part["mae_after"] < part["mae_before"]).sum()),
                       "mae_higher": int((part["mae_after"] > part["mae_before"]).sum())}
            entry["backup"][label] = summary
            body += (f"- curves {label} ({summary['curves']}): median R² {summary['r2_before']:.3f} -> "
                     f"{summary['r2_after']:.3f}, MAE {summary['mae_before']:.4f} -> {summary['mae_after']:.4f}, "
                     f"coverage {summary['coverage_before']:.3f} -> {summary['coverage_after']:.3f}; per curve MAE "
                     f"lower / higher {summary['mae_lower']} / {summary['mae_higher']}.\n")
        document["sets"][name] = entry
        body += "\n"
    document["machine"] = machine(load_before)
    body += load_note(document["machine"]) + "\n"
    write_results(args.out, args.name, document, f"Reading code against {args.before_code.name}", body)
    return document


if __name__ == "__main__":
    main()
