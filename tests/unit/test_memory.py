"""`inference.memory`: the memory a run may take, the machine's or its cgroup v2's headroom, on real files."""

from __future__ import annotations

from pathlib import Path

import psutil

from veernet_pipeline.inference.memory import MB, available_mb, cgroup_headroom


def _cgroup(root: Path, path: str, limit: str, current: int) -> None:
    folder = root / path
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "memory.max").write_text(f"{limit}\n")
    (folder / "memory.current").write_text(f"{current}\n")


def test_the_headroom_is_the_least_of_the_cgroups_on_the_path(tmp_path: Path) -> None:
    root, proc = tmp_path / "cgroup", tmp_path / "proc_cgroup"
    root.mkdir()
    proc.write_text("0::/kube/pod/box\n")
    _cgroup(root, "kube", "max", 9_000)  # no limit
    _cgroup(root, "kube/pod", "10000", 4_000)  # 6,000 left
    _cgroup(root, "kube/pod/box", "5000", 2_000)  # 3,000 left: the least
    assert cgroup_headroom(root, proc) == 3_000
    _cgroup(root, "kube/pod/box", "max", 2_000)
    assert cgroup_headroom(root, proc) == 6_000
    _cgroup(root, "kube/pod", "3000", 4_000)  # over its limit already: nothing left, never negative
    assert cgroup_headroom(root, proc) == 0


def test_no_limit_no_cgroup_v2_or_no_file_is_no_headroom(tmp_path: Path) -> None:
    root, proc = tmp_path / "cgroup", tmp_path / "proc_cgroup"
    _cgroup(root, "user.slice", "max", 1)
    proc.write_text("0::/user.slice\n")
    assert cgroup_headroom(root, proc) is None
    proc.write_text("12:memory:/user.slice\n")  # cgroup v1 only
    assert cgroup_headroom(root, proc) is None
    assert cgroup_headroom(root, tmp_path / "missing") is None


def test_available_memory_is_the_machines_or_less(tmp_path: Path) -> None:
    root, proc = tmp_path / "cgroup", tmp_path / "proc_cgroup"
    proc.write_text("0::/box\n")
    _cgroup(root, "box", str(256 * MB), 56 * MB)
    assert available_mb(root, proc) == 200.0  # far below any machine's available memory
    machine = available_mb(root, tmp_path / "missing")
    assert 0 < machine <= psutil.virtual_memory().total / MB
