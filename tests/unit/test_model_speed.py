"""The fast paths give the plain path's answers: channels_last, tiles batched into one forward; and they run.

Tolerance: fp32 in another memory layout or batch size only changes how oneDNN blocks and orders
its sums, so probabilities agree to 1e-4 (float32 rounding compounded over the net's 30-odd layers;
measured up to 4e-5); see benchmarks/results/speed.md for what the fast paths buy.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.nets import untrained_veernet
from veernet_pipeline.config import load_settings
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.reading import predict

PARAMS_YAML = Path(__file__).parents[2] / "params.yaml"
FP32_TOLERANCE = 1e-4


def _scan(height: int, width: int) -> np.ndarray:
    rng = np.random.default_rng(3)
    image = rng.normal(230, 10, size=(height, width)).clip(0, 255).astype(np.uint8)
    cols = np.arange(width)
    image[(height / 2 + height / 3 * np.sin(cols / 17.0)).astype(int), cols] = 0
    return image


def test_channels_last_gives_the_default_layouts_logits() -> None:
    settings = load_settings(PARAMS_YAML, profile="test")
    model = untrained_veernet(settings, NUM_CLASSES)
    assert all(p.is_contiguous(memory_format=torch.channels_last) for p in model.parameters() if p.ndim == 4)
    x = torch.rand(2, 1, 96, 160, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        fast = model(x)
        plain = model.to(memory_format=torch.contiguous_format)(x)
    # Logits come out in the default layout either way (model.veernet.depth_to_space), ready for a softmax along rows.
    assert fast.is_contiguous() and plain.is_contiguous()
    torch.testing.assert_close(torch.softmax(fast, 1), torch.softmax(plain, 1), rtol=0, atol=FP32_TOLERANCE)


def test_batched_tiles_give_the_one_tile_probabilities() -> None:
    settings = load_settings(PARAMS_YAML, profile="test")
    model = untrained_veernet(settings, NUM_CLASSES)
    image = _scan(100, 1000)  # 7 tiles of 256 with 128 overlap: batches of 4 and 3, each tile padded to 128 rows
    assert len(predict.plan_tiles(1000, 256, 128)) == 7
    # In fp32, the tolerance's precision (a CPU with bf16 instructions reads in bf16 by default).
    batched = predict.predict_probs(model, image, 256, 128, stack=4, dtype=None)
    one_by_one = predict.predict_probs(model, image, 256, 128, stack=1, dtype=None)
    assert batched.shape == one_by_one.shape == (NUM_CLASSES, 100, 1000)
    np.testing.assert_allclose(batched, one_by_one, rtol=0, atol=FP32_TOLERANCE)


def test_tiles_stack_on_a_gpu_and_go_one_at_a_time_on_cpu() -> None:
    # speed.md: a stack of 4 tiles costs 0.197 s per tile on 2 CPU threads against 0.118 s alone.
    assert predict.tiles_per_forward("cpu") == 1
    assert predict.tiles_per_forward(torch.device("cuda", 0)) == 4
    with pytest.raises(ValueError, match="at least 1 tile"):
        predict.predict_probs(torch.nn.Identity(), np.zeros((4, 4), np.uint8), 32, 0, stack=0)


def test_a_training_step_in_channels_last_runs_at_few_channels() -> None:
    """torch 2.13's oneDNN crashes (SIGSEGV) in the backward of a stride-2 1x1 conv in channels_last at 6-12
    input channels; VeerNet's shortcuts must not use one. Run in a child process so a crash fails this test
    rather than ending the suite."""
    code = textwrap.dedent("""
        import torch
        from veernet_pipeline.config import ModelParams
        from veernet_pipeline.model.veernet import build_model
        torch.manual_seed(0)
        model = build_model(ModelParams(channels=[8, 8, 12, 16, 32], attention_layers=1, attention_heads=2), 7)
        for _ in range(2):
            model.zero_grad()
            model(torch.rand(2, 1, 64, 96)).logsumexp(1).mean().backward()
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_mirrored_reading_is_the_mean_of_three_plain_readings_and_leaves_torch_as_it_was() -> None:
    """In-place stitching and mirror accumulation against the three passes read one by one and averaged."""
    settings = load_settings(PARAMS_YAML, profile="test")
    model = untrained_veernet(settings, NUM_CLASSES)
    image = _scan(100, 700)  # 100 rows pad to 128: tiles carry a valid mask; 700 columns: 4 tiles of 256
    fastpath = torch.backends.mha.get_fastpath_enabled()
    mirrored = predict.predict_probs(model, image, 256, 128, mirror=True)
    assert torch.backends.mha.get_fastpath_enabled() == fastpath

    def plain(im: np.ndarray) -> np.ndarray:
        return predict.predict_probs(model, np.ascontiguousarray(im), 256, 128)

    expected = (plain(image) + plain(image[:, ::-1])[:, :, ::-1] + plain(image[::-1])[:, ::-1]) / 3.0
    np.testing.assert_allclose(mirrored, expected, rtol=0, atol=FP32_TOLERANCE)


def test_a_tile_needing_no_padding_reads_as_with_an_all_real_mask() -> None:
    settings = load_settings(PARAMS_YAML, profile="test")
    model = untrained_veernet(settings, NUM_CLASSES)
    x = torch.from_numpy(_scan(128, 256)).float().div(255.0)[None, None]
    with torch.inference_mode():
        unmasked = torch.softmax(model(x, None), 1)
        masked = torch.softmax(model(x, torch.ones(1, 128, 256)), 1)
    torch.testing.assert_close(unmasked, masked, rtol=0, atol=FP32_TOLERANCE)
    np.testing.assert_allclose(predict.predict_probs(model, _scan(128, 256), 256, 0, dtype=None), unmasked[0].numpy(),
                               rtol=0, atol=FP32_TOLERANCE)


@pytest.mark.parametrize("threads", [2, 4])
def test_a_scan_read_on_several_threads_has_the_bytes_of_one_thread_and_the_count_comes_back(threads: int) -> None:
    """Tiles side by side, each on one torch thread: the probabilities do not depend on the thread count."""
    settings = load_settings(PARAMS_YAML, profile="test")
    model = untrained_veernet(settings, NUM_CLASSES)
    image = _scan(100, 700)  # 4 tiles of 256 a pass, 12 with the mirrored passes
    caller = torch.get_num_threads()
    try:
        torch.set_num_threads(threads)
        several = predict.predict_probs(model, image, 256, 128, mirror=True)
        assert torch.get_num_threads() == threads
        torch.set_num_threads(1)
        one = predict.predict_probs(model, image, 256, 128, mirror=True)
    finally:
        torch.set_num_threads(caller)
    assert np.array_equal(several, one)
