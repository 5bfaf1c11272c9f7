"""`keep_freed_memory`: freed blocks stay in the process, so a repeated step stops re-faulting its pages.

Each case runs in a fresh interpreter (the limits are process-wide and cannot be unset) and counts
the minor page faults of a step that writes 40 blocks of 4 MiB and frees them, as a training step
or a tile's read frees its activations. Pages touched per step: 40 x 4 MiB / page size (10,240 per
block of 4 KiB pages). glibc's default trims the freed heap and faults them in again; with the
limits set the step reuses its pages.
"""

from __future__ import annotations

import platform
import resource
import subprocess
import sys
import textwrap

import pytest

from veernet_pipeline import allocator

BLOCKS, BLOCK_BYTES, STEPS = 40, 4 * 2**20, 5
PAGES_PER_STEP = BLOCKS * BLOCK_BYTES // resource.getpagesize()

STEP = f"""
import resource
import numpy as np

def step():
    blocks = [np.ones({BLOCK_BYTES // 8}) for _ in range({BLOCKS})]
    del blocks

step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range({STEPS}):
    step()
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / {STEPS})
"""

glibc_only = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the limits are glibc's mallopt")


def _faults_per_step(setup: str) -> float:
    script = textwrap.dedent(setup) + STEP
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stdout
    return float(out.split()[-1])


@glibc_only
def test_the_default_allocator_faults_the_freed_pages_in_again() -> None:
    # The case the limits exist for: without them a step re-faults a large share of what it touches.
    assert _faults_per_step("") > PAGES_PER_STEP / 8


@glibc_only
def test_keep_freed_memory_reuses_the_pages() -> None:
    setup = """
    from veernet_pipeline.allocator import keep_freed_memory
    assert keep_freed_memory()
    """
    assert _faults_per_step(setup) < PAGES_PER_STEP / 100


@glibc_only
def test_a_read_sets_the_limits_for_its_process() -> None:
    # predict_probs is every read's forward pass (evaluate, infer, digitize): after one, the process keeps freed memory.
    setup = """
    import numpy as np
    from tests.nets import untrained_veernet
    from veernet_pipeline.config import load_settings
    from veernet_pipeline.io.classes import NUM_CLASSES
    from veernet_pipeline.reading.predict import predict_probs

    model = untrained_veernet(load_settings("params.yaml", profile="test"), NUM_CLASSES)
    predict_probs(model, np.full((64, 96), 255, np.uint8), 96, 32)
    """
    assert _faults_per_step(setup) < PAGES_PER_STEP / 100


def test_another_c_library_is_left_alone(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(platform, "libc_ver", lambda: ("", ""))
    with caplog.at_level("INFO", logger=allocator.__name__):
        assert allocator.keep_freed_memory.__wrapped__() is False
    assert "not glibc" in caplog.text
