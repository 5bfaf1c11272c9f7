"""Tranches: the folders an archive arrives in, and the unit a partitioned run processes.

A tranche is one top-level folder under `paths.raw` (everything beneath it, sub-folders included);
scans that sit directly in `paths.raw` form one more tranche named `ROOT_TRANCHE`, so a flat archive
is one partition and an archive of folders is one partition per folder. Archives arrive, are
shipped and are reviewed tranche by tranche (a box of logs, a vendor delivery, a well campaign),
and one tranche shares its calibration (`tranche.calib.json`): that is why the partition is the
folder and not a batch of N scans, whose boundaries would move whenever a scan is added.

A run of one tranche writes its tables under `paths.tranches/<tranche>/` (`ArchiveDirs`); LAS and
QC files stay in `paths.digitized`, keyed by content, so tranches never collide and a scan present
in two tranches is digitised once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from veernet_pipeline.config import Settings
from veernet_pipeline.provenance import digest

# The partition of scans directly in paths.raw. A top-level folder of this name would be ambiguous.
ROOT_TRANCHE = "_root"


@dataclass(frozen=True)
class ArchiveDirs:
    """Where one run's tables go: the whole archive (`tranche=None`) or one tranche."""

    ingested: Path
    validated: Path
    index: Path  # holds the digitised index.parquet and failures.parquet


def archive_dirs(settings: Settings, tranche: str | None = None) -> ArchiveDirs:
    """The ingest, validate and index folders of the whole archive, or of one tranche."""
    if tranche is None:
        return ArchiveDirs(settings.path("ingested"), settings.path("validated"), settings.path("digitized"))
    check_name(tranche)
    base = settings.path("tranches") / tranche
    return ArchiveDirs(base / "ingested", base / "validated", base / "digitized")


def check_name(tranche: str) -> None:
    """Reject a tranche name that is not one folder name (or `ROOT_TRANCHE`).

    Raises:
        ValueError: empty, a path with separators, or `.`/`..`.
    """
    if not tranche or "/" in tranche or "\\" in tranche or tranche in (".", ".."):
        raise ValueError(f"tranche {tranche!r}: not a top-level folder name under paths.raw "
                         f"(use the folder's name, or {ROOT_TRANCHE!r} for scans directly in paths.raw)")


def tranche_of(relative: str) -> str:
    """The tranche of a path relative to `paths.raw`: its first folder, or `ROOT_TRANCHE`."""
    head, sep, _ = relative.partition("/")
    return head if sep else ROOT_TRANCHE


def in_tranche(relative: str, tranche: str | None) -> bool:
    """Whether a path relative to `paths.raw` belongs to `tranche` (every path does when it is None)."""
    return tranche is None or tranche_of(relative) == tranche


def tranche_states(raw_dir: Path, extensions: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Each tranche holding a scan -> digest of its files' (path, size, mtime); nothing is read.

    Sidecars count as well as scans, so a corrected `tranche.calib.json` changes its tranche's
    digest. A sensor compares these digests between ticks; a partitioned ingest keys its cache on
    the same digest.

    Raises:
        ValueError: `paths.raw` holds scans directly and also a folder named `ROOT_TRANCHE`.
    """
    raw_dir = Path(raw_dir)
    if not raw_dir.is_dir():
        return {}
    wanted = {(e if e.startswith(".") else f".{e}").lower() for e in extensions}
    files: dict[str, list[tuple[str, int, int]]] = {}
    has_scan: set[str] = set()
    for path in raw_dir.rglob("*"):
        if not path.is_file():
            continue
        rel = path.relative_to(raw_dir).as_posix()
        stat = path.stat()
        files.setdefault(tranche_of(rel), []).append((rel, stat.st_size, stat.st_mtime_ns))
        if path.suffix.lower() in wanted:
            has_scan.add(tranche_of(rel))
    if ROOT_TRANCHE in has_scan and (raw_dir / ROOT_TRANCHE).is_dir():
        raise ValueError(f"{raw_dir / ROOT_TRANCHE}: a folder named {ROOT_TRANCHE!r} clashes with the tranche of the "
                         "scans directly in paths.raw; rename the folder")
    return {name: digest(sorted(files[name])) for name in sorted(has_scan)}


def run_tranches(settings: Settings) -> list[str]:
    """The tranches that have tables under `paths.tranches` (runs of single tranches), sorted."""
    base = settings.path("tranches")
    return sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []
