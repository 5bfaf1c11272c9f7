"""Archive digitising throughput: one tranche run at a time vs two at once, and through the Dask executor.

    python benchmarks/archive.py [--scans N] [--out DIR]

Builds a throwaway project with two tranches of N distinct sample scans each (the `test`
profile's archive rules, scans 2,048-3,200 x 96-128 px), ingests and validates them, and registers
an untrained VeerNet of the `cpu` profile's architecture (speed does not depend on the weights) as
`champion`, with the `cpu` profile's extraction and the base tile width. Then, each on a fresh copy
of that project, so no run finds another's LAS files:

- `1 worker`: `veernet infer --tranche a`, then `--tranche b` (one process at a time);
- `2 workers`: the same two commands at once (two concurrent partition runs, one core each);
- `dask`: the two tranches as two concurrent runs of `digitize_archive_dask` (ingest, validate,
  digitise and the checks of each tranche; ingest and validate reuse their recorded results) on a
  local Dask cluster of 2 worker processes.

Every process has one torch thread (`OMP_NUM_THREADS=1`). The fixed cost of one run (process start,
imports, model download and load) is measured as a run of a tranche already done, and taken out of
the per-scan figure that the projection of the 136,771-scan archive uses. Writes `archive.json`
and `archive.md` into `--out` (default: `results/` beside this script).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd
import torch
import yaml
from _record import load_note, machine, markdown_table, write_results

from veernet_pipeline import stages
from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.io.tranches import archive_dirs

REPO = Path(__file__).resolve().parents[1]
TRANCHES = ("a", "b")
ARCHIVE_SCANS = 136_771
# One real track strip cut from a Kansas log page (BRIEF "The data"): the scan size of the projection.
ARCHIVE_SCAN_PX = 17_864 * 497
MODEL = "veernet-multiclass"


def _project(folder: Path, n_scans: int) -> Settings:
    """Two tranches of `n_scans` distinct valid scans, ingested and validated, and a registered champion."""
    from veernet_pipeline.model.veernet import build_model, save_model
    from veernet_pipeline.synthetic.sample import build_sample_archive
    from veernet_pipeline.tracking import store

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["profile"] = "test"
    cpu = params["profiles"]["cpu"]
    params["profiles"]["test"].update(model=cpu["model"], extract=cpu["extract"], infer={})
    params["profiles"]["test"]["synthesize"]["width"] = {"min": 2048, "max": 3200}
    folder.mkdir(parents=True)
    (folder / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    settings = load_settings(folder / "params.yaml")
    for i, tranche in enumerate(TRANCHES):
        # Another seed per tranche: distinct scans, so no LAS of one tranche is another's.
        build_sample_archive(settings.path("raw") / tranche, load_settings(folder / "params.yaml",
                             overrides=[f"seed={settings.seed + 1000 * i}"]), n_valid=n_scans)
        stages.run("ingest", settings, tranche=tranche)
        assert stages.run("validate", settings, tranche=tranche).counts["validated"] == n_scans
    torch.manual_seed(settings.seed)
    model_dir = settings.path("models") / "multiclass"
    save_model(model_dir, build_model(settings.model, 3).eval(), settings.model, 3)
    with store.stage_run(settings.root, "train_multiclass", {}, {"profile": settings.profile}):
        version = store.log_model(model_dir, MODEL)
    store.set_alias(settings.root, MODEL, "champion", version)
    return settings


def _env(project: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VEERNET_PROFILE", "MLFLOW_TRACKING_URI")}
    env.update(VEERNET_PARAMS=str(project / "params.yaml"), OMP_NUM_THREADS="1",
               PYTHONPATH=str(REPO), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}", **extra)
    return env


def _timed(commands: list[list[str]], project: Path, concurrent: bool, **env: str) -> float:
    """Wall time of `commands` in `project`, one after another or all at once; each must succeed."""
    started = time.perf_counter()
    runs: list[subprocess.Popen[bytes]] = []
    for command in commands:
        run = subprocess.Popen(command, cwd=REPO, env=_env(project, **env), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
        runs.append(run)
        if not concurrent:
            _finish(run, command)
    for run, command in zip(runs, commands, strict=True):
        _finish(run, command)
    return time.perf_counter() - started


def _finish(run: subprocess.Popen[bytes], command: list[str]) -> None:
    _, err = run.communicate(timeout=900)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{err.decode()[-3000:]}")


def _infer(tranche: str) -> list[str]:
    return [sys.executable, "-m", "veernet_pipeline.cli", "infer", "--tranche", tranche]


def _written(project: Path) -> int:
    """LAS files written by the runs in a copy of the project, from its tranches' indexes."""
    copy = load_settings(project / "params.yaml")
    return sum(int((pd.read_parquet(archive_dirs(copy, t).index / "index.parquet")["status"] == "written").sum())
               for t in TRANCHES)


def _copy(settings: Settings, folder: Path, name: str) -> Path:
    target = folder / name
    shutil.copytree(settings.root, target)
    return target


def _dask(settings: Settings, project: Path) -> float:
    """Both tranches as concurrent runs of `digitize_archive_dask` on a local cluster of 2 worker processes."""
    import dask
    from dagster import DagsterInstance
    from distributed import LocalCluster

    sys.path.insert(0, str(REPO))
    from assets.partitions import register_tranches

    home = project / ".dagster"
    home.mkdir()
    with DagsterInstance.from_config(str(home)) as instance:
        register_tranches(instance, load_settings(project / "params.yaml"))
    os.environ.update(OMP_NUM_THREADS="1", PYTHONPATH=str(REPO))
    with dask.config.set({"distributed.worker.daemon": False}), LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None) as cluster:
        config = project / "dask.yaml"
        config.write_text(yaml.safe_dump({
            "execution": {"config": {"cluster": {"existing": {"address": cluster.scheduler_address}}}},
            "resources": {"pipeline": {"config": {"params_path": str(project / "params.yaml")}}}}))
        commands = [["dagster", "job", "execute", "-m", "assets.definitions", "-j", "digitize_archive_dask", "-c",
                     str(config), "--tags", json.dumps({"dagster/partition": t})] for t in TRANCHES]
        return _timed(commands, project, concurrent=True, DAGSTER_HOME=str(home))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scans", type=int, default=6, help="distinct scans per tranche")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="veernet-archive-bench-") as tmp:
        folder = Path(tmp)
        settings = _project(folder / "base", args.scans)
        manifest = pd.concat(pd.read_parquet(archive_dirs(settings, t).validated / "validated.parquet")
                             for t in TRANCHES)
        mean_px = float((manifest["width"] * manifest["height"]).mean())
        n = len(manifest)
        one = _copy(settings, folder, "one")
        t_one = _timed([_infer(t) for t in TRANCHES], one, concurrent=False)
        t_fixed = _timed([_infer(TRANCHES[0])], one, concurrent=False)  # every scan done: start-up only
        two = _copy(settings, folder, "two")
        t_two = _timed([_infer(t) for t in TRANCHES], two, concurrent=True)
        t_dask = _dask(settings, _copy(settings, folder, "dask"))
        assert _written(two) == n, "a run did not write every scan"

    per_scan = (t_one - len(TRANCHES) * t_fixed) / n  # one core, start-up taken out
    per_scan_archive = per_scan * ARCHIVE_SCAN_PX / mean_px
    record: dict[str, Any] = {
        "machine": machine(load_before), "scans": n, "tranches": len(TRANCHES), "mean_scan_px": round(mean_px),
        "wall_s": {"one_worker": round(t_one, 2), "two_workers": round(t_two, 2), "dask_two_workers": round(t_dask, 2),
                   "run_start_up": round(t_fixed, 2)},
        "speed_up_two_workers": round(t_one / t_two, 3), "speed_up_dask": round(t_one / t_dask, 3),
        "scans_per_hour_per_core": {"one_worker": round(n / t_one * 3600), "two_workers": round(n / t_two / 2 * 3600),
                                    "steady_one_core": round(3600 / per_scan)},
        "steady_s_per_scan": round(per_scan, 4),
        "projection": {"archive_scans": ARCHIVE_SCANS, "scan_px": ARCHIVE_SCAN_PX,
                       "s_per_scan_one_core": round(per_scan_archive, 3),
                       "hours_on_n_cores": {str(k): round(ARCHIVE_SCANS * per_scan_archive / k / 3600, 1)
                                            for k in (1, 2, 8, 32, 128)}},
    }
    write_results(args.out, "archive", record, "Archive digitising throughput (benchmarks/archive.py)", _body(record))


def _body(r: dict[str, Any]) -> str:
    w, p = r["wall_s"], r["projection"]
    per_core = r["scans_per_hour_per_core"]
    rows = [["1 worker (2 runs in turn)", f"{w['one_worker']:.1f}", "1.00", f"{per_core['one_worker']:,}"],
            ["2 workers (2 runs at once)", f"{w['two_workers']:.1f}", f"{r['speed_up_two_workers']:.2f}",
             f"{per_core['two_workers']:,}"],
            ["Dask, 2 worker processes (2 runs)", f"{w['dask_two_workers']:.1f}", f"{r['speed_up_dask']:.2f}", "-"]]
    table = markdown_table(["configuration", "wall s", "speed-up", "scans/h per core"], rows, {1, 2, 3})
    hours = markdown_table(["CPU cores (1 worker each)", "hours", "days"],
                           [[k, f"{h:,.1f}", f"{h / 24:,.1f}"] for k, h in p["hours_on_n_cores"].items()], {0, 1, 2})
    s = p["s_per_scan_one_core"]
    return (f"{r['scans']} scans in {r['tranches']} tranches, mean {r['mean_scan_px']:,} px a scan; untrained VeerNet "
            f"of the `cpu` architecture, `cpu` extraction; one torch thread a process.\n\n{table}\n"
            f"Start-up of one run (process, imports, model load; a tranche already done): {w['run_start_up']:.1f} s. "
            f"Steady: {r['steady_s_per_scan']:.3f} s a scan on one core, "
            f"{r['scans_per_hour_per_core']['steady_one_core']:,} scans/h per core.\n\n"
            f"## Projection: {p['archive_scans']:,} scans\n\nAssumed scan: one real track strip, 17,864 x 497 = "
            f"{p['scan_px']:,} px (BRIEF), cost proportional to pixels (tiles are fixed-size): "
            f"{r['steady_s_per_scan']:.3f} s x {p['scan_px']:,} / {r['mean_scan_px']:,} = {s:.2f} s a scan "
            f"on one core.\n"
            f"On N cores: {p['archive_scans']:,} x {s:.2f} s / N.\n\n{hours}\n"
            f"One GPU machine: {p['archive_scans']:,} x {s:.2f} s / (3600 x G) hours, where G is the GPU's speed-up "
            f"over one of these cores on the same tiles; G is not measured here (no GPU on this machine). The net is "
            f"only part of the time (decode, path search and LAS/QC writing stay on the CPU), so G is bounded by "
            f"that share: measure it with this script on the GPU machine before planning on it.\n\n"
            f"{load_note(r['machine'])}\n")


if __name__ == "__main__":
    main()
