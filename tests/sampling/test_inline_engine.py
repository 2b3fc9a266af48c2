"""The inline engine on the real CPU build: `model.engine_process = "auto"` runs it on an idle host that
computes in float32 (sampling.vllm_sampler.process_plan), so it is the default run's engine on AVX2 machines.

It starts in a child interpreter of its own: inline, vLLM reseeds the process's global RNGs and makes its
`torch.set_num_threads` a no-op, which must not reach the other tests of this worker.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

SCRIPT = """
import json, os
from prm_factory.config.run_config import load_config
from prm_factory.flows.engines import engine_settings
from prm_factory.sampling.protocol import GenerationParams
from prm_factory.sampling.vllm_sampler import VLLMSampler, engine_record

settings = engine_settings(load_config(None, {"model.engine_process": "inline", "model.cpu_threads": "all"}))
sampler = VLLMSampler(settings)
prompts = [sampler.render_chat(None, "What is 3 + 4?"), sampler.render_chat(None, "Name a prime.")]
params = GenerationParams(n=2, temperature=0.7, top_p=0.95, max_tokens=12)
draws = [[[g.text for g in gens] for gens in sampler.generate(prompts, params)] for _ in range(2)]
children = set()
for task in os.listdir(f"/proc/{os.getpid()}/task"):
    children |= set(open(f"/proc/{os.getpid()}/task/{task}/children").read().split())
names = sorted(open(f"/proc/{pid}/comm").read().strip() for pid in children if os.path.exists(f"/proc/{pid}"))
print(json.dumps({"mode": sampler.process.mode, "record": engine_record(settings)["engine_process"],
                  "draws": draws, "children": names}))
sampler.close()
"""


def test_an_inline_engine_generates_in_the_callers_process_and_draws_again_the_same() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VLLM_CPU_OMP")}
    env.pop("VLLM_ENABLE_V1_MULTIPROCESSING", None)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["mode"] == result["record"] == "inline"
    # no EngineCore and no worker process: the model computed in this one
    assert not [name for name in result["children"] if "VLLM" in name or "EngineCore" in name], result
    first, again = result["draws"]
    assert all(text for gens in first for text in gens) and len(first) == 2 and len(first[0]) == 2
    assert first == again  # each request seeded, the prefix cache reset per call: the same tokens again
