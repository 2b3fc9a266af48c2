"""Which engine a run uses, and the vLLM import started ahead of it (flows/engines.py)."""

from __future__ import annotations

import sys

from prm_factory.config.run_config import load_config
from prm_factory.flows.engines import import_engine_in_background


def test_the_offline_backend_imports_vllm_on_a_thread_and_a_fleet_does_not():
    fleet = load_config(None, {"model.backend": "openai", "model.base_urls": ["http://gpu1:8000"]})
    assert import_engine_in_background(fleet) is None
    thread = import_engine_in_background(load_config(None, {}))
    assert thread is not None and thread.daemon
    thread.join(timeout=300)
    assert not thread.is_alive() and "vllm.entrypoints.llm" in sys.modules
