"""Generate the candidates of one synthetic set: on worker processes, in index order, resumable.

Candidate i is made by a `Maker` (render, check, write; see `dataset.CandidateMaker`) from
(seed, i) alone. The worker writes each candidate's files atomically as it completes, then its
record `<id>.record.json` (index row, verdict, pixel digest, generation key) last, so a record on
disk means a complete candidate. A restarted run reuses every candidate whose record carries the
same generation key and, if it was valid, whose files are all present: its index row comes from
the record and nothing is rendered. Everything else is rendered again, to the same bytes. Nothing
is deleted: candidates of an earlier, larger run stay on disk, outside the index.

Keeping: candidates are decided in index order. A valid candidate is kept until `count` are kept;
one whose pixels repeat a kept candidate's is rejected as `duplicate`, as archive validation
does. Work is submitted in rounds of exactly as many candidates as are still missing, so none is
rendered that could not be kept, and generated == kept + rejected + not_needed.

Parallelism: a `spawn` process pool (the same on every platform, and no fork of a threaded parent
such as a Dagster run), whose initializer hands each worker the maker once (it loads its wells on
its first candidate and keeps them); `map` returns results in index order. It is
`concurrent.futures`' pool, not `multiprocessing.Pool`: when a worker dies (the OOM killer, a
signal) the former raises `BrokenProcessPool`, the latter waits for the lost task forever.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from veernet_pipeline.io.atomic import write_text_atomic
from veernet_pipeline.progress import progress
from veernet_pipeline.validation.quarantine import ReasonCode

logger = logging.getLogger(__name__)

RECORD_SUFFIX = ".record.json"


@dataclass(frozen=True)
class Candidate:
    """One made candidate: its index row, the files it wrote and the verdict ("" = valid)."""

    id: str
    key: str
    row: dict[str, Any]
    files: tuple[str, ...] = ()
    reason_code: str = ""
    reason: str = ""
    sha256: str = ""


class Maker(Protocol):
    """Makes candidate `index` (writing its files and record); picklable, for worker processes."""

    def prepare(self) -> None:
        """Load what every candidate needs (the wells), once per process; later calls do nothing."""

    def __call__(self, index: int) -> Candidate:
        """Render, check and write candidate `index`; return what its record holds."""


@dataclass
class Outcome:
    """What generating a set did. generated == kept + rejected + not_needed."""

    generated: int
    kept: list[Candidate] = field(default_factory=list)
    rejected: list[Candidate] = field(default_factory=list)
    rendered: int = 0
    reused: int = 0

    @property
    def not_needed(self) -> int:
        return self.generated - len(self.kept) - len(self.rejected)

    def counts(self) -> dict[str, int]:
        """Flat counts for the stage result."""
        return {"generated": self.generated, "kept": len(self.kept), "rejected": len(self.rejected),
                "not_needed": self.not_needed, "rendered": self.rendered, "reused": self.reused}


def candidate_id(index: int) -> str:
    """The file stem of candidate `index`."""
    return f"{index:06d}"


def write_record(set_dir: Path, candidate: Candidate) -> None:
    """Write a candidate's record; call it after the candidate's files, it marks them complete."""
    text = json.dumps(asdict(candidate), indent=1, sort_keys=True) + "\n"
    write_text_atomic(set_dir / f"{candidate.id}{RECORD_SUFFIX}", text)


def read_record(set_dir: Path, instance_id: str, key: str) -> Candidate | None:
    """The candidate recorded on disk, if it was made with generation `key` and its files are all there."""
    path = set_dir / f"{instance_id}{RECORD_SUFFIX}"
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    if data.get("key") != key:
        return None
    candidate = Candidate(**{**data, "files": tuple(data["files"])})
    if not all((set_dir / name).is_file() for name in candidate.files):
        return None
    return candidate


# The maker of this worker process, set once by the pool initializer.
_WORKER: dict[str, Maker] = {}


def _init_worker(make: Maker) -> None:
    # Only store the maker: it prepares itself on its first candidate, where an error reaches the
    # caller with its candidate's index instead of breaking the whole pool.
    _WORKER["make"] = make


def _make_in_worker(index: int) -> Candidate:
    return _WORKER["make"](index)


def generate_set(set_dir: Path, make: Maker, key: str, count: int, generated: int, workers: int,
                 desc: str) -> Outcome:
    """Make candidates 0.. in order until `count` are kept or `generated` are spent.

    Args:
        set_dir: the set folder (created if missing); candidates' files and records go there.
        make: the candidate maker.
        key: generation key; a record with another key is stale and its candidate is made again.
        count: candidates to keep.
        generated: candidate budget (indices 0..generated-1).
        workers: processes; 0 = one per CPU core, 1 = in this process.
        desc: progress bar label.

    Returns:
        The kept and rejected candidates in index order, and how many were rendered or reused.
        Fewer than `count` kept means the budget ran out; the caller decides what that means.
    """
    set_dir.mkdir(parents=True, exist_ok=True)
    processes = min(workers or os.cpu_count() or 1, max(generated, 1))
    outcome = Outcome(generated)
    seen: dict[str, str] = {}  # pixel digest -> id of the kept candidate that has those pixels
    start = 0
    with ExitStack() as stack:
        bar = stack.enter_context(progress([], total=count, desc=desc, unit="log"))
        run: Callable[[list[int]], Iterator[Candidate]] | None = None
        while len(outcome.kept) < count and start < generated:
            chunk = range(start, min(generated, start + count - len(outcome.kept)))
            found = {i: read_record(set_dir, candidate_id(i), key) for i in chunk}
            missing = [i for i in chunk if found[i] is None]
            if missing and run is None:
                run = _runner(stack, make, processes)
            fresh = run(missing) if run is not None and missing else iter(())
            for i in chunk:
                candidate = found[i]
                if candidate is None:
                    candidate = next(fresh)
                    outcome.rendered += 1
                else:
                    outcome.reused += 1
                if not candidate.reason_code and candidate.sha256 in seen:
                    reason = f"{candidate.id}.tif: same pixels as {seen[candidate.sha256]}.tif, which is kept"
                    candidate = Candidate(**{**asdict(candidate), "reason_code": str(ReasonCode.DUPLICATE),
                                             "reason": reason})
                if candidate.reason_code:
                    outcome.rejected.append(candidate)
                else:
                    seen[candidate.sha256] = candidate.id
                    outcome.kept.append(candidate)
                    bar.update(1)
                bar.set_postfix(rejected=len(outcome.rejected), reused=outcome.reused, refresh=False)
            start = chunk.stop
    reasons = Counter(c.reason_code for c in outcome.rejected)
    logger.info("%s: kept %d of %d candidates, rejected %d %s, not needed %d; rendered %d, reused %d from disk",
                desc, len(outcome.kept), generated, len(outcome.rejected), dict(reasons), outcome.not_needed,
                outcome.rendered, outcome.reused)
    return outcome


def _runner(stack: ExitStack, make: Maker, processes: int) -> Callable[[list[int]], Iterator[Candidate]]:
    """A function mapping candidate indices to made candidates, in order, in this process or a pool."""
    if processes <= 1:
        make.prepare()
        return lambda indices: map(make, indices)
    pool = stack.enter_context(ProcessPoolExecutor(
        processes, mp_context=multiprocessing.get_context("spawn"), initializer=_init_worker, initargs=(make,)))
    return lambda indices: pool.map(_make_in_worker, indices)
