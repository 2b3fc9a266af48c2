"""A verifier that cannot load what it needs fails the run's preflight with one clear line."""

from prm_factory.config.run_config import load_config
from prm_factory.flows.preflight import config_problems, labeler_problems


def test_a_working_install_passes_the_math_verifier_check():
    assert labeler_problems(load_config(None)) == []


def test_a_broken_math_verifier_fails_preflight_with_one_line(monkeypatch):
    import prm_factory.flows.preflight as preflight
    import prm_factory.verifiers.math.answers as answers

    monkeypatch.setattr(preflight, "_math_dependencies_ok", False)  # an earlier pass in this process
    monkeypatch.setattr(
        answers, "check_dependencies", lambda **_: ["math-verify could not be imported: No module named x"]
    )
    problems = config_problems(load_config(None))
    assert problems[-1] == "math verifier: math-verify could not be imported: No module named x"
    assert len(problems) == 1 or all("math verifier" not in p for p in problems[:-1])


def test_the_math_check_runs_once_per_process_once_it_passed(monkeypatch):
    """The CLI checks before it redirects output, then the API checks again: one worker start, not two."""
    import prm_factory.flows.preflight as preflight
    import prm_factory.verifiers.math.answers as answers

    calls: list[int] = []
    monkeypatch.setattr(preflight, "_math_dependencies_ok", False)
    monkeypatch.setattr(answers, "check_dependencies", lambda **_: calls.append(1) or ["broken"])
    assert labeler_problems(load_config(None)) == ["math verifier: broken"]
    assert labeler_problems(load_config(None)) == ["math verifier: broken"]  # a failure is checked again
    monkeypatch.setattr(answers, "check_dependencies", lambda **_: calls.append(1) or [])
    assert labeler_problems(load_config(None)) == [] and labeler_problems(load_config(None)) == []
    assert len(calls) == 3
