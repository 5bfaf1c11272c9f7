"""`make ui`: `dagster dev` loads workspace.yaml on 127.0.0.1 and serves the asset graph with its checks."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.conftest import REPO

QUERY = """{ assetNodes { assetKey { path } dependencyKeys { path }
  assetChecksOrError { ... on AssetChecks { checks { name } } } } }"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _graphql(port: int, deadline: float) -> dict:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=json.dumps({"query": QUERY}).encode(),
                                     headers={"Content-Type": "application/json"})
    while True:
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                data = json.loads(response.read())
            if data.get("data", {}).get("assetNodes"):
                return data["data"]
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"dagster dev did not serve the asset graph on port {port}")
        time.sleep(1)


def test_dagster_dev_serves_the_asset_graph_and_checks(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path)}
    # A session of its own, so stopping it reaps the code-server child too.
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "dagster"), "dev", "-w", "workspace.yaml", "-h", "127.0.0.1",
         "-p", str(port)],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    try:
        data = _graphql(port, time.monotonic() + 180)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        # Children that outlive the parent's shutdown still belong to its process group; an empty group is fine.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)

    nodes = {"/".join(n["assetKey"]["path"]): n for n in data["assetNodes"]}
    assert set(nodes) == {"raw_scans", "validated_scans", "quarantined_scans", "synthetic_binary",
                          "synthetic_multiclass", "foreign_scans", "binary_model", "multiclass_model",
                          "model_evaluation", "digitized_logs", "review_queue"}
    assert {d["path"][0] for d in nodes["digitized_logs"]["dependencyKeys"]} == {"validated_scans", "model_evaluation"}
    assert {d["path"][0] for d in nodes["review_queue"]["dependencyKeys"]} == {"digitized_logs"}
    checks = {c["name"] for n in nodes.values() for c in n["assetChecksOrError"].get("checks", [])}
    assert {"scans_accounted_for", "validated_scans_schema", "validated_scans_expectations",
            "champion_gate_passed"} <= checks
