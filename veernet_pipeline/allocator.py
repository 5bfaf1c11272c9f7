"""Keep freed memory in the process, so that a tensor freed in one step is reused by the next.

By default glibc's malloc hands freed memory back to the kernel: blocks above its mmap threshold
are unmapped when freed, and the heap's free top is trimmed once it exceeds twice the largest
block seen. PyTorch's CPU tensors come straight from malloc, and a training step or a tiled read
frees most of what it allocated, so every step the kernel zero-fills the same pages again on first
touch. `keep_freed_memory` sets three `mallopt(3)` limits so that blocks up to 32 MiB come from the
heap and the heap is never trimmed. benchmarks/results/allocator.md (6 pairs of fresh processes):
a `cpu` training step (4 crops of 640 x 256) re-faulted 59,535 pages and ran 0.448 s, with the
limits 401 and 0.385 s (1.20x within pairs); a mirrored 640 x 12,800 strip 860,213 faults (3.3 GB)
and 5.83 s, with the limits 558 and 4.55 s (1.29x); an epoch of the multiclass stage 1.09x, its
weights the same bytes. The cost: the process keeps its peak heap (resident about 230 MB more
between reads, flat read after read). Blocks above 32 MiB, such as a strip's 230 MB of
probabilities, are still returned when freed.

The same limits as environment variables (`MALLOC_MMAP_THRESHOLD_` and friends) would depend on
how each runner starts its process (a shell, DVC, a Dagster run worker); set here they hold for
every process that trains or reads. The mmap threshold is always set with the trim limit: any
explicit limit turns glibc's adaptive mmap threshold off (mallopt(3)), and left at its 128 KiB
start every block of an activation's size would be mapped and faulted afresh. Other C libraries
(musl, macOS) are left as they are.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import platform

log = logging.getLogger(__name__)

# mallopt(3) parameter numbers (glibc's <malloc.h>).
M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
# glibc's largest mmap threshold on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX); mallopt refuses a larger one.
MMAP_THRESHOLD = 32 * 2**20
# Grow the heap 64 MiB at a time rather than by each request.
TOP_PAD = 64 * 2**20
# The largest int mallopt takes: the heap's free top is never trimmed.
NEVER_TRIM = 2**31 - 1
LIMITS = ((M_MMAP_THRESHOLD, MMAP_THRESHOLD), (M_TRIM_THRESHOLD, NEVER_TRIM), (M_TOP_PAD, TOP_PAD))


@functools.cache
def keep_freed_memory() -> bool:
    """Set glibc malloc's limits so freed blocks up to 32 MiB stay in the process (once per process).

    Returns:
        True when the limits are set; False when the C library is not glibc or refused a limit
        (logged with the reason; speed is all that depends on it).
    """
    name, version = platform.libc_ver()
    if name != "glibc":
        log.info("allocator: the C library is %s, not glibc; malloc keeps its own limits", name or "unknown")
        return False
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    refused = [param for param, value in LIMITS if libc.mallopt(param, value) != 1]
    if refused:
        log.warning("allocator: glibc %s refused mallopt parameters %s; freed memory goes back to the kernel",
                    version, refused)
        return False
    log.debug("allocator: glibc %s keeps freed blocks up to %d MiB", version, MMAP_THRESHOLD // 2**20)
    return True
