"""Candidate checks: a synthetic instance must pass what an archive scan must pass, and have sane labels.

A multiclass candidate is described by the manifest row ingest would write for it (8-bit, one
sample, one page, landscape, its sidecar) and that row runs through the same pandera schema and
bound rules as an archive scan (`validation.schema`, from `settings.validate_`); its sidecar must
load with `Calibration.from_dict`, as validation requires of a scan's sidecar. Duplicates (same
pixels as an earlier kept candidate) are decided by the caller, which sees candidates in order.

On top of that, a label sanity rule (the archive has no labels to check), per curve of the sidecar
(two curves may share a style class, so the rule reads which curve owns each pixel,
`SyntheticLog.curves`):

- coverage: the curve owns ink in at least `MIN_COLUMN_SHARE` of the image columns. A curve
  painted over by the others for most of its run, or faded/dashed to almost nothing, teaches
  the model little and makes curve identity unlearnable;
- visibility: at least `MIN_INKED_SHARE` of the curve's labelled pixels are darker than the paper
  by `INK_CONTRAST` gray levels or more (paper = the image's median gray, sampled). A label on
  ink that scan artefacts washed out would teach the model to see curves on blank paper.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
import pandera.pandas as pa

from veernet_pipeline.config import ValidateParams
from veernet_pipeline.io.calibration import Calibration, CalibrationError
from veernet_pipeline.io.ingest import MANIFEST_DTYPES, image_statistics
from veernet_pipeline.io.manifest import blank_row
from veernet_pipeline.synthetic.render import SyntheticLog
from veernet_pipeline.validation.quarantine import ReasonCode
from veernet_pipeline.validation.schema import bound_rules, manifest_schema

LABEL_COVERAGE = "label_coverage"
LABEL_INVISIBLE = "label_invisible"
MIN_COLUMN_SHARE = 0.25
MIN_INKED_SHARE = 0.5
INK_CONTRAST = 40


@dataclass(frozen=True)
class Verdict:
    """The outcome of checking one candidate: `reason_code` is "" when it passed."""

    reason_code: str
    reason: str
    sha256: str


def pixel_digest(image: np.ndarray) -> str:
    """sha256 of an image's shape and pixels: the candidate's identity for the duplicate rule."""
    return hashlib.sha256(f"{image.shape}".encode() + np.ascontiguousarray(image).tobytes()).hexdigest()


def manifest_row(name: str, image: np.ndarray, sidecar: str, sha256: str) -> dict[str, object]:
    """The manifest row ingest would write for this instance stored as an 8-bit landscape TIFF."""
    height, width = image.shape
    # Every other column as ingest leaves it for a scan (no page strip, no error).
    return {**blank_row(name), "sha256": sha256, "bytes": int(image.nbytes), "width": width, "height": height,
            "stored_width": width, "stored_height": height, "net_width": width, "net_height": height, "bits": 8,
            "samples": 1, "photometric": "minisblack", "compression": "zlib", "pages": 1, "decoded": name,
            **image_statistics(image), "calibration": sidecar}


@lru_cache(maxsize=4)
def _schema(bounds_json: str) -> pa.DataFrameSchema:
    # Keyed by JSON: ValidateParams holds a list, so it cannot be a cache key itself.
    return manifest_schema(ValidateParams.model_validate_json(bounds_json))


def schema_reason(row: dict[str, object], bounds: ValidateParams) -> tuple[str, str] | None:
    """Run one manifest row through the archive schema; (reason code, message) of the first failed bound."""
    frame = pd.DataFrame([row]).astype(MANIFEST_DTYPES)
    try:
        _schema(bounds.model_dump_json()).validate(frame, lazy=True)
        return None
    except pa.errors.SchemaErrors as exc:
        failed = set(exc.failure_cases["column"])
    rules = [rule for rule in bound_rules(bounds) if rule.column in failed]
    if not rules:
        raise ValueError(f"{row['path']}: manifest row does not match the schema ({sorted(failed)} failed)")
    return str(rules[0].reason), "; ".join(rule.message(row) for rule in rules)


def label_reason(name: str, image: np.ndarray, curves: np.ndarray, n_curves: int) -> tuple[str, str] | None:
    """The label sanity rule (module docstring); (reason code, message) of the first curve that fails.

    Args:
        name: the candidate's file name, for the message.
        image: the rendered scan.
        curves: which curve owns each pixel: 0 none, k + 1 for sidecar curve k.
        n_curves: curves in the sidecar.

    Shape:
        image, curves: (H, W) uint8.
    """
    # Paper: the median gray of every 4th row and column (paper fills most of a track); the rule
    # then only looks at labelled pixels, a few percent of the image.
    paper = int(np.median(image[::4, ::4]))
    rows, columns = np.nonzero(curves)
    owners, grays = curves[rows, columns], image[rows, columns]
    for curve in range(1, n_curves + 1):
        mine = owners == curve
        share = float(np.count_nonzero(np.bincount(columns[mine], minlength=curves.shape[1]))) / curves.shape[1]
        if share < MIN_COLUMN_SHARE:
            return LABEL_COVERAGE, (f"{name}: curve {curve} labels ink in {share:.0%} of the columns, under "
                                    f"{MIN_COLUMN_SHARE:.0%}")
        inked = float((grays[mine] <= paper - INK_CONTRAST).mean())
        if inked < MIN_INKED_SHARE:
            return LABEL_INVISIBLE, (f"{name}: only {inked:.0%} of curve {curve}'s labelled pixels are at least "
                                     f"{INK_CONTRAST} gray levels darker than the paper ({paper}), under "
                                     f"{MIN_INKED_SHARE:.0%}")
    return None


def check_candidate(instance_id: str, log: SyntheticLog, bounds: ValidateParams) -> Verdict:
    """Check one multiclass candidate: archive schema, sidecar, then the label rule; first failure wins."""
    name = f"{instance_id}.tif"
    sha256 = pixel_digest(log.image)
    found = schema_reason(manifest_row(name, log.image, f"{instance_id}.calib.json", sha256), bounds)
    if found is None:
        try:
            Calibration.from_dict(log.calibration.to_dict(), source=f"{instance_id}.calib.json")
        except CalibrationError as exc:
            found = str(ReasonCode.BAD_CALIBRATION), f"{name}: sidecar is unusable ({exc})"
    if found is None:
        found = label_reason(name, log.image, log.curves, len(log.values))
    code, reason = found if found is not None else ("", "")
    return Verdict(code, reason, sha256)
