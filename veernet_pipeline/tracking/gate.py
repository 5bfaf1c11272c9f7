"""The promotion policy: when an evaluated model version becomes `champion`.

A version is promoted when its gate figure (the lowest per-style median R^2 on held-out logs)
meets the threshold and is no worse than the current champion's. A NaN figure (a curve never
found) never passes a set threshold; an open gate (threshold None) promotes the newest version
whatever its figures, and says so in the decision. Each decision is written onto the version as
tags, so the registry itself says why a version is or is not champion.
"""

from __future__ import annotations

import logging
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from veernet_pipeline.tracking import store
from veernet_pipeline.tracking.store import CHAMPION

log = logging.getLogger(__name__)

GATE_METRIC = "median_r2"


def gate(root: Path, name: str, version: str, figure: float, threshold: float | None) -> dict[str, Any]:
    """Decide whether `name` version `version` becomes champion, move the alias if so, record why.

    Args:
        root: the project folder (locates the MLflow store).
        name: the registered model.
        version: the evaluated version.
        figure: its gate figure (median R^2 of its worst line style); NaN when a style was never read.
        threshold: the lowest figure that may be promoted; None = an open gate.

    Returns:
        The decision: promoted, version, median_r2, threshold, previous_champion, previous_median_r2.
    """
    figure = float(figure)
    current = store.alias_version(root, name, CHAMPION)
    current_figure = store.version_metric(root, name, current, GATE_METRIC) if current else None
    if threshold is None:
        promoted = True
    else:
        no_worse = current_figure is None or math.isnan(current_figure) or figure >= current_figure
        promoted = figure >= threshold and no_worse
    store.tag_version(root, name, version, GATE_METRIC, f"{figure:.6f}")
    store.tag_version(root, name, version, "gate", "open" if threshold is None else f"min_{GATE_METRIC}={threshold}")
    if promoted:
        store.set_alias(root, name, CHAMPION, version)
    decision = {"promoted": promoted, "version": version, GATE_METRIC: figure, "threshold": threshold,
                "previous_champion": current, "previous_median_r2": current_figure}
    log.info("gate: %s", decision)
    return decision


def promote(root: Path, name: str, version: str, reason: str, by: str) -> dict[str, Any]:
    """Move `champion` to `name` version `version` by hand, and record who did it and why on the version.

    The operator's way past the gate (e.g. the `cpu` recipe's model, which misses the 0.98 bar on
    one curve): explicit, with a reason, and visible in the registry as the version's tags
    `promoted_by`, `promotion_reason`, `promoted_at` (UTC) and `gate` = `manual`.

    Raises:
        MissingModel: the store holds no such version.
        ValueError: `reason` or `by` is empty.
    """
    if not reason.strip() or not by.strip():
        raise ValueError("a promotion needs a reason and a name (who promotes): pass --reason TEXT")
    store.registered_version(root, name, version)
    previous = store.alias_version(root, name, CHAMPION)
    tags = {"promoted_by": by, "promotion_reason": reason, "gate": "manual",
            "promoted_at": datetime.now(UTC).isoformat(timespec="seconds")}
    for key, value in tags.items():
        store.tag_version(root, name, version, key, value)
    store.set_alias(root, name, CHAMPION, version)
    decision = {"promoted": True, "model": name, "version": version, "previous_champion": previous, **tags}
    log.info("manual promotion: %s", decision)
    return decision
