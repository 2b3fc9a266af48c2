"""The CPU top-p shortcut keeps the nucleus vLLM's own sort keeps, and the plugin installs it in vLLM."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import pytest
import torch

from prm_factory.sampling.cpu_top_p import top_p_from_candidates
from prm_factory.sampling.vllm_plugins import (
    BATCH_NOISE_ENV,
    CPU_TOP_P_ENV,
    ENGINE_MARKER_ENV,
    cpu_top_p_mode,
    register,
)

VOCAB = 49_152  # SmolLM2's


def vllm_ops():
    """vLLM's sampler module, imported where a test asks for it: at module level it added about 6 s of
    vLLM imports to every xdist worker's collection, including workers that never run these tests."""
    from vllm.v1.sample.ops import topk_topp_sampler

    return topk_topp_sampler


def vllm_sort(logits, k, p):
    """vLLM's sort-based masking, called directly (the module attribute may carry the plugin's patch)."""
    return vllm_ops().apply_top_k_top_p_pytorch(logits, k, p, allow_cpu_sync=True)


def lm_like_logits(rows: int, seed: int, spread: float) -> torch.Tensor:
    """A few strong tokens over a long flat tail, like a language model's next-token logits."""
    gen = torch.Generator().manual_seed(seed)
    logits = torch.randn(rows, VOCAB, generator=gen)
    heads = torch.randint(0, VOCAB, (rows, 8), generator=gen)
    boost = torch.rand(rows, 8, generator=gen) * spread + 4.0
    return logits.scatter_(1, heads, boost)


def kept(masked: torch.Tensor) -> torch.Tensor:
    return ~masked.isinf()


@pytest.mark.parametrize("p_value", [0.5, 0.8, 0.95, 0.999])
def test_the_kept_tokens_and_their_logits_equal_the_sort_based_mask(p_value):
    logits = lm_like_logits(48, seed=1, spread=8.0) / 0.7
    p = torch.full((48,), p_value)
    ours = top_p_from_candidates(logits.clone(), None, p, fallback=vllm_sort)
    theirs = vllm_sort(logits.clone(), None, p)
    assert torch.equal(kept(ours), kept(theirs))
    assert torch.equal(ours[kept(ours)], theirs[kept(theirs)])


def test_rows_whose_nucleus_reaches_past_the_candidates_fall_back_to_the_sort():
    flat = torch.randn(3, VOCAB, generator=torch.Generator().manual_seed(2)) * 0.1  # nucleus of thousands
    p = torch.tensor([0.9, 0.95, 0.5])
    calls: list[int] = []

    def counting_sort(logits, k, q):
        calls.append(logits.shape[0])
        return vllm_sort(logits, k, q)

    ours = top_p_from_candidates(flat.clone(), None, p, fallback=counting_sort, candidates=64)
    assert calls == [3]
    assert torch.equal(kept(ours), kept(vllm_sort(flat.clone(), None, p)))
    assert int(kept(ours)[0].sum()) > 64


def test_a_mixed_batch_masks_each_row_by_its_own_p_and_leaves_p_one_rows_whole():
    logits = lm_like_logits(4, seed=3, spread=2.0)
    p = torch.tensor([0.3, 1.0, 0.95, 1.0])
    ours = top_p_from_candidates(logits.clone(), None, p, fallback=vllm_sort)
    assert kept(ours)[1].all() and kept(ours)[3].all()
    theirs = vllm_sort(logits.clone(), None, p)
    assert torch.equal(kept(ours)[[0, 2]], kept(theirs)[[0, 2]])
    assert 1 <= int(kept(ours)[0].sum()) < int(kept(ours)[2].sum())


def test_top_k_and_no_top_p_are_left_to_vllm():
    logits = lm_like_logits(2, seed=4, spread=2.0)
    seen = []
    fallback = lambda lg, k, p: seen.append((k is None, p is None)) or lg  # noqa: E731
    top_p_from_candidates(logits, torch.tensor([5, 5]), torch.tensor([0.9, 0.9]), fallback=fallback)
    top_p_from_candidates(logits, None, None, fallback=fallback)
    assert seen == [(False, False), (True, True)]


def test_a_one_token_nucleus_keeps_only_the_argmax():
    logits = torch.zeros(1, 10)
    logits[0, 7] = 30.0
    ours = top_p_from_candidates(logits, None, torch.tensor([0.9]), fallback=vllm_sort, candidates=4)
    assert kept(ours)[0].nonzero().flatten().tolist() == [7]


def test_the_mode_comes_from_the_environment_and_a_bad_value_is_named():
    assert cpu_top_p_mode({}) == "candidates"
    assert cpu_top_p_mode({CPU_TOP_P_ENV: "sort"}) == "sort"
    with pytest.raises(ValueError, match=CPU_TOP_P_ENV):
        cpu_top_p_mode({CPU_TOP_P_ENV: "fast"})


def test_the_plugin_is_registered_with_vllm_and_patches_the_cpu_sampler(monkeypatch):
    names = {e.name: e.value for e in importlib.metadata.entry_points(group="vllm.general_plugins")}
    assert names.get("prm_factory") == "prm_factory.sampling.vllm_plugins:register"

    def original(logits, k, p):  # vLLM's own, as before any engine of this process patched it
        return logits

    ops = vllm_ops()
    # an engine started in this process (the suite's offline engine runs its plugins here too) patched it
    monkeypatch.setattr(ops, "apply_top_k_top_p", original)  # restored after the test
    monkeypatch.setenv(ENGINE_MARKER_ENV, "1")  # an engine the factory started
    monkeypatch.delenv(BATCH_NOISE_ENV, raising=False)  # the suite's simulated rounding (tests/conftest.py)
    monkeypatch.setenv(CPU_TOP_P_ENV, "sort")
    register()
    assert ops.apply_top_k_top_p is original
    monkeypatch.delenv(CPU_TOP_P_ENV)
    register()
    register()  # vLLM may load plugins more than once
    patched = ops.apply_top_k_top_p
    assert getattr(patched, "prm_factory", False) and patched.keywords["fallback"] is original


def test_naming_the_plugin_from_the_sampler_imports_no_torch():
    """The CLI imports the flows, which import the sampler: torch (2-3 s) comes only with an engine."""
    code = "import sys, prm_factory.flows.generation_run; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
