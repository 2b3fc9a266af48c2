import pytest

from prm_factory.sampling.backends import drop_sampler, get_sampler
from prm_factory.sampling.openai_sampler import OpenAICompatibleSampler
from prm_factory.sampling.vllm_sampler import EngineSettings


def settings(**overrides: object) -> EngineSettings:
    base = {"checkpoint": "/models/x", "model_id": "x", "backend": "openai", "base_urls": ("http://h:1",)}
    return EngineSettings(**{**base, **overrides})  # type: ignore[arg-type]


def test_openai_backend_gives_one_server_sampler_per_settings() -> None:
    s = settings(served_model_name="served")
    sampler = get_sampler(s)
    assert isinstance(sampler, OpenAICompatibleSampler)
    assert sampler.model == "served" and sampler.model_id == "x" and get_sampler(s) is sampler
    drop_sampler(s)
    assert get_sampler(s) is not sampler
    drop_sampler(s)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [({"base_urls": ()}, "needs model.base_urls"), ({"backend": "tgi"}, "unknown sampler backend")],
)
def test_bad_backend_settings_say_what_is_missing(overrides: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        get_sampler(settings(**overrides))
