"""sampling.vllm_sampler.stop_engines: a CLI run ends by stopping its engines, each with a short grace."""

from __future__ import annotations

from prm_factory.sampling import vllm_sampler


class StandInEngine:
    """Records how it was closed; the shutdown itself is vLLM's (exercised by every CLI run in tests/e2e)."""

    def __init__(self) -> None:
        self.closed: list[float | None] = []

    def close(self, timeout: float | None = None) -> None:
        self.closed.append(timeout)


def test_every_engine_is_closed_with_the_grace_and_forgotten(monkeypatch) -> None:
    first, second = StandInEngine(), StandInEngine()
    monkeypatch.setattr(vllm_sampler, "_ENGINES", {"first": first, "second": second})
    vllm_sampler.stop_engines(timeout=1.0)
    assert first.closed == [1.0] and second.closed == [1.0]
    assert vllm_sampler._ENGINES == {}
    vllm_sampler.stop_engines(timeout=1.0)  # nothing left: nothing closed twice
    assert first.closed == [1.0]
