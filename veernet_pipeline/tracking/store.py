"""The MLflow tracking store: runs, the model registry and aliases.

By default the store lives in the project: `mlruns.db` (SQLite) beside params.yaml and
artifacts under `mlartifacts/`; `MLFLOW_TRACKING_URI` points elsewhere. Models are logged as
weights plus our own model code (models-from-code, `pyfunc_model.py`), never as a pickled
object or a shape-fixed torch.export program, so a variable-width net always loads.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import mlflow
import numpy as np
from mlflow import MlflowClient
from mlflow.exceptions import MlflowException
from mlflow.models import ModelSignature
from mlflow.types import ParamSchema, ParamSpec, Schema, TensorSpec

from veernet_pipeline.errors import MissingModel, NoChampion
from veernet_pipeline.io.atomic import atomic_dir

log = logging.getLogger(__name__)

EXPERIMENT = "veernet"
BINARY_MODEL = "veernet-binary"
MULTICLASS_MODEL = "veernet-multiclass"
CHAMPION = "champion"
PYFUNC_CODE = Path(__file__).with_name("pyfunc_model.py")
MODEL_FILES = ("weights.pt", "model.json")
TRACKING_URI_ENV = "MLFLOW_TRACKING_URI"

# One scan of any size in, class probabilities of the same size out; tiling is a call-time param.
SIGNATURE = ModelSignature(
    inputs=Schema([TensorSpec(np.dtype(np.uint8), (-1, -1))]),
    outputs=Schema([TensorSpec(np.dtype(np.float32), (-1, -1, -1))]),
    params=ParamSchema([ParamSpec("tile_width", "long", 2048), ParamSpec("tile_overlap", "long", 128)]),
)


def tracking_uri(root: Path) -> str:
    """$MLFLOW_TRACKING_URI, else a SQLite store in the project folder."""
    return os.environ.get(TRACKING_URI_ENV) or f"sqlite:///{(root / 'mlruns.db').resolve()}"


def configure(root: Path) -> MlflowClient:
    """Point MLflow at the store and make sure the experiment exists with project-local artifacts."""
    uri = tracking_uri(root)
    # MLflow's per-file download bar redraws on every file: noise in a captured run log.
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
    # set_tracking_uri also exports MLFLOW_TRACKING_URI. Undo that: the variable is the operator's
    # choice, and left set it would pin every later `configure` in this process to this store.
    chosen = os.environ.get(TRACKING_URI_ENV)
    mlflow.set_tracking_uri(uri)
    if chosen is None:
        os.environ.pop(TRACKING_URI_ENV, None)
    else:
        os.environ[TRACKING_URI_ENV] = chosen
    mlflow.set_registry_uri(uri)
    client = MlflowClient(uri, uri)
    if client.get_experiment_by_name(EXPERIMENT) is None:
        client.create_experiment(EXPERIMENT, artifact_location=(root / "mlartifacts").resolve().as_uri())
    mlflow.set_experiment(EXPERIMENT)
    return client


def flatten(nested: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings as one level of dotted keys: {"a": {"b": 1}} -> {"a.b": 1}."""
    flat: dict[str, Any] = {}
    for key, value in nested.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def numeric(nested: Mapping[str, Any]) -> dict[str, float]:
    """The finite numbers of `flatten(nested)`, as floats; booleans, text, None and NaN are left out.

    A mapping (the validation IoU per class name) becomes `<name>.<class>`; a list one entry per item,
    `<name>_<index>`. NaN is left
    out because some MLflow stores reject it.
    """
    flat: dict[str, float] = {}
    for key, value in flatten(nested).items():
        for name, item in ([(f"{key}_{i}", v) for i, v in enumerate(value)] if isinstance(value, list)
                           else [(key, value)]):
            if isinstance(item, int | float) and not isinstance(item, bool) and math.isfinite(item):
                flat[name] = float(item)
    return flat


@contextmanager
def stage_run(root: Path, stage: str, params: Mapping[str, Any], tags: Mapping[str, str]) -> Iterator[Any]:
    """An MLflow run for one pipeline stage, with its flattened params and tags."""
    configure(root)
    with mlflow.start_run(run_name=stage, tags={"stage": stage, **tags}) as run:
        mlflow.log_params(flatten(params))
        yield run


def log_epoch(epoch: int, metrics: Mapping[str, Any]) -> None:
    """Metrics into the active run at step `epoch`: the finite numbers of `metrics` (see `numeric`)."""
    mlflow.log_metrics(numeric(metrics), step=epoch)


def log_model(model_dir: Path, registered_name: str) -> str:
    """Log weights + model code to the active run, register it, return the new version number."""
    artifacts = {"weights": str(model_dir / "weights.pt"), "config": str(model_dir / "model.json")}
    info = mlflow.pyfunc.log_model(
        name="model",
        python_model=str(PYFUNC_CODE),
        artifacts=artifacts,
        signature=SIGNATURE,
        # Explicit requirements: skips MLflow's slow dependency inference, and pins what loads it.
        pip_requirements=[f"torch=={_version('torch')}", f"mlflow=={mlflow.__version__}", "veernet-pipeline"],
        registered_model_name=registered_name,
    )
    version = str(info.registered_model_version)
    log.info("registered %s version %s", registered_name, version)
    return version


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package).split("+")[0]


def alias_version(root: Path, name: str, alias: str) -> str | None:
    """Version number behind `name@alias`, or None when the alias is not set."""
    client = configure(root)
    try:
        return str(client.get_model_version_by_alias(name, alias).version)
    except MlflowException as exc:
        if exc.error_code in ("RESOURCE_DOES_NOT_EXIST", "INVALID_PARAMETER_VALUE"):
            return None
        raise


def set_alias(root: Path, name: str, alias: str, version: str) -> None:
    configure(root).set_registered_model_alias(name, alias, version)


def resolve_model(root: Path, uri: str) -> tuple[str, str]:
    """`models:/name@alias` or `models:/name/version` -> (model name, version number)."""
    if not uri.startswith("models:/"):
        raise ValueError(f"model URI {uri!r} must look like models:/NAME@ALIAS or models:/NAME/VERSION")
    ref = uri.removeprefix("models:/")
    if "@" in ref:
        name, alias = ref.split("@", 1)
        version = alias_version(root, name, alias)
        if version is None:
            raise NoChampion(
                f"{uri}: alias {alias!r} is not set on {name!r}; run `veernet evaluate` (it sets `champion` when "
                f"the gate passes), `veernet promote --model {name} --version N --reason TEXT`, or pass "
                f"--model models:/{name}/<version>"
            )
        return name, version
    name, version = ref.split("/", 1)
    return name, version


def download_model(root: Path, uri: str, dest: Path) -> tuple[Path, str]:
    """Fetch a registered model version into a cache folder under `dest`, once.

    The folder is named by what it holds, `<name>-v<version>-<key>`, the key a short hash of
    the tracking URI and the version's run and source: version numbers restart in every store,
    so two stores' `veernet-multiclass/1` must not share a folder. The download goes to a
    temporary sibling that is renamed into place only once complete, so a folder under its
    final name is always whole and an interrupted download is simply redone. When a concurrent
    download of the same version finishes first, its folder is kept.

    Args:
        root: the project folder (locates the default tracking store).
        uri: `models:/NAME@ALIAS` or `models:/NAME/VERSION`.
        dest: the cache folder.

    Returns:
        (folder holding weights.pt and model.json, version number).
    """
    name, version = resolve_model(root, uri)
    held = registered_version(root, name, version)
    key = hashlib.sha256("\n".join((tracking_uri(root), held.run_id or "", held.source or "")).encode()).hexdigest()
    target = dest / f"{name}-v{version}-{key[:12]}"
    if not target.is_dir():
        with atomic_dir(target, keep_existing=True) as tmp:
            mlflow.artifacts.download_artifacts(artifact_uri=f"models:/{name}/{version}", dst_path=str(tmp))
            missing = [f for f in MODEL_FILES if not (tmp / "artifacts" / f).is_file()]
            if missing:
                raise FileNotFoundError(f"models:/{name}/{version} holds no {', '.join(missing)}: not a VeerNet model")
    return target / "artifacts", version


def registered_version(root: Path, name: str, version: str) -> Any:
    """The registry's record of `name` version `version`.

    Raises:
        MissingModel: the store holds no such model or version.
    """
    try:
        return configure(root).get_model_version(name, version)
    except MlflowException as exc:
        if exc.error_code in ("RESOURCE_DOES_NOT_EXIST", "INVALID_PARAMETER_VALUE"):
            raise MissingModel(f"models:/{name}/{version} is not registered in {tracking_uri(root)}") from exc
        raise


def log_artifact(path: Path, artifact_path: str | None = None) -> None:
    mlflow.log_artifact(str(path), artifact_path=artifact_path)


def tag_version(root: Path, name: str, version: str, key: str, value: str) -> None:
    configure(root).set_model_version_tag(name, version, key, value)


def version_metric(root: Path, name: str, version: str, key: str) -> float | None:
    """A figure recorded on a model version as a tag by the gate (e.g. its median R^2)."""
    tags = configure(root).get_model_version(name, version).tags
    return float(tags[key]) if key in tags else None
