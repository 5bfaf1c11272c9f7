"""The CPU's feature flags as the Linux kernel lists them: a source independent of torch's cpuinfo."""

from __future__ import annotations

import re
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")


def cpu_flags() -> set[str]:
    """The `flags` of /proc/cpuinfo's first CPU."""
    return set(re.search(r"^flags\s*:(.*)$", CPUINFO.read_text(), re.MULTILINE).group(1).split())


def has_bf16_instructions() -> bool:
    """Whether the kernel lists AVX512-BF16 or AMX-BF16: where the reading should run in bf16."""
    return bool(cpu_flags() & {"avx512_bf16", "amx_bf16"})
