"""How much memory this process may still take: the machine's available memory, or its cgroup's headroom if less.

The archive's reading workers hold a scan each (`inference.readers`), and a scan's reading grows with its
pixels, so a run sizes how many it reads at once by what is free when it starts. psutil reads the machine's
available memory (MemAvailable on Linux: free memory plus what the page cache can give back); a container's
limit is not in it, so on cgroup v2 (Docker, Kubernetes, systemd on current Linux) the limit of this process's
cgroup and of each cgroup above it, less what that cgroup already holds, bounds it too: a container killed by its
own limit is the OOM kill that a machine with memory to spare still sees. cgroup v1 is not read (its machines
get the machine's figure).
"""

from __future__ import annotations

from pathlib import Path

import psutil

MB = 2**20
CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")


def cgroup_headroom(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> int | None:
    """Bytes this process's cgroup v2 and its ancestors may still take (the least `memory.max - memory.current`).

    Returns:
        None when no cgroup on the path sets a limit, or the process is not under cgroup v2.
    """
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return None
    own = next((line[3:] for line in lines if line.startswith("0::")), None)
    if own is None:
        return None
    headroom, folder = None, root / own.strip("/")
    while True:
        limit_file, usage_file = folder / "memory.max", folder / "memory.current"
        if limit_file.is_file() and usage_file.is_file():
            limit = limit_file.read_text().strip()
            if limit != "max":
                left = max(0, int(limit) - int(usage_file.read_text()))
                headroom = left if headroom is None else min(headroom, left)
        if folder == root or root not in folder.parents:
            return headroom
        folder = folder.parent


def available_mb(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> float:
    """MB this process may still take: the machine's available memory, or less where its cgroup says so."""
    free = psutil.virtual_memory().available
    headroom = cgroup_headroom(root, proc_cgroup)
    return (free if headroom is None else min(free, headroom)) / MB
