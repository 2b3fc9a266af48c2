"""A verifier that cannot load what it needs fails the run's preflight with one clear line."""

from prm_factory.config.run_config import load_config
from prm_factory.flows.preflight import config_problems, labeler_problems


def test_a_working_install_passes_the_math_verifier_check():
    assert labeler_problems(load_config(None)) == []


def test_a_broken_math_verifier_fails_preflight_with_one_line(monkeypatch):
    import prm_factory.verifiers.math.answers as answers

    monkeypatch.setattr(
        answers, "check_dependencies", lambda **_: ["math-verify could not be imported: No module named x"]
    )
    problems = config_problems(load_config(None))
    assert problems[-1] == "math verifier: math-verify could not be imported: No module named x"
    assert len(problems) == 1 or all("math verifier" not in p for p in problems[:-1])
