from prm_factory.evaluation.external import evaluate_external, gold_step_labels, predicted_first_error
from prm_factory.schemas.external_chains import ExternalChain


def chain(
    first_error: int | None, n: int = 3, ratings: tuple[int | None, ...] | None = None
) -> ExternalChain:
    return ExternalChain(
        "c", "p", tuple(f"s{i}" for i in range(n)), first_error_label=first_error, step_labels=ratings
    )


def test_first_error_f1_and_step_scores_on_a_known_set() -> None:
    chains = [chain(-1), chain(1), chain(2), chain(0)]
    predicted = [
        ["correct", "correct", "correct"],  # right: no error
        ["correct", "incorrect", "correct"],  # right: first error 1
        ["incorrect", "correct", "incorrect"],  # wrong: says 0, gold 2
        ["unverifiable", "correct", "correct"],  # wrong: misses the error at 0
    ]
    report = evaluate_external(chains, predicted)
    assert report.first_error is not None
    assert report.first_error.accuracy_correct == 1.0
    assert report.first_error.accuracy_erroneous == 1 / 3
    assert abs(report.first_error.f1 - 0.5) < 1e-9
    # gold incorrect steps: (1,1), (2,2), (3,0); predicted incorrect among labeled steps: (1,1), (2,0), (2,2)
    assert report.steps is not None
    assert (report.steps.true_positive, report.steps.false_positive, report.steps.false_negative) == (2, 1, 1)


def test_prm800k_ratings_are_gold_step_labels() -> None:
    assert gold_step_labels(chain(None, 3, (1, 0, -1))) == ["correct", "correct", "incorrect"]
    assert gold_step_labels(chain(None, 2, (1, None))) == ["correct", "unlabeled"]
    assert gold_step_labels(chain(None)) is None
    assert predicted_first_error(["correct", "unverifiable"]) == -1
    assert predicted_first_error(["unverifiable", "incorrect", "incorrect"]) == 1
