"""The label layout of training and scoring: one position per step, on its own separator, as TRL had it."""

from __future__ import annotations

import pytest

from prm_factory.training.layout import DEFAULT_SEPARATOR, alignment_problem, layout_chain, prepare
from prm_factory.training.rows import TrainRow

CHAINS = [
    ("What is 2 + 2?", ["Step 1: 2 + 2 = 4.", "The answer is 4."]),
    ("Ana has 3 apples.\n", ["She buys 2 more: 3 + 2 = 5.\nSo she has 5.", "#### 5"]),
    ("", ["a"]),
]


@pytest.mark.parametrize("separator", ["\n", DEFAULT_SEPARATOR, "\n\n"])
def test_layout_equals_trl_prm_trainer_tokenize_row(smol_tokenizer, separator) -> None:
    prm = pytest.importorskip("trl.experimental.prm")
    for prompt, steps in CHAINS:
        row = {"prompt": prompt, "completions": steps, "labels": [True] * len(steps)}
        theirs = prm.PRMTrainer.tokenize_row(row, smol_tokenizer, separator, 1024, None, False, False)
        ours = layout_chain(smol_tokenizer, prompt, steps, separator, 1024)
        assert list(ours.input_ids) == theirs["input_ids"]
        assert list(ours.positions) == [i for i, label in enumerate(theirs["labels"]) if label != -100]


def test_each_label_sits_on_the_last_token_of_its_own_separator(smol_tokenizer) -> None:
    prompt, steps = CHAINS[0]
    laid = layout_chain(smol_tokenizer, prompt, steps, DEFAULT_SEPARATOR)
    assert len(laid.positions) == 2 and laid.input_ids[0] == smol_tokenizer.bos_token_id
    starts = [laid.positions[0] + 1]
    assert smol_tokenizer.decode(laid.input_ids[1 : laid.positions[0] + 1]).endswith(
        steps[0] + DEFAULT_SEPARATOR
    )
    assert (
        smol_tokenizer.decode(laid.input_ids[starts[0] : laid.positions[1] + 1])
        == steps[1] + DEFAULT_SEPARATOR
    )


def test_alignment_check_passes_clean_rows_and_names_each_failure(smol_tokenizer) -> None:
    prompt, steps = CHAINS[1]
    assert alignment_problem(smol_tokenizer, prompt, steps, DEFAULT_SEPARATOR) is None
    assert "contains the step separator" in alignment_problem(smol_tokenizer, prompt, steps, "\n")
    assert "encodes to no tokens" in alignment_problem(smol_tokenizer, prompt, steps, "")
    full = len(layout_chain(smol_tokenizer, prompt, steps, DEFAULT_SEPARATOR).input_ids)
    assert alignment_problem(smol_tokenizer, prompt, steps, DEFAULT_SEPARATOR, max_length=full) is None
    cut = alignment_problem(smol_tokenizer, prompt, steps, DEFAULT_SEPARATOR, max_length=full - 1)
    assert cut.startswith("truncation keeps 1 of 2")
    # SmolLM2 reads a lone "\n\n" as one token, and the same characters after text as two
    assert "tokenize differently" in alignment_problem(smol_tokenizer, *CHAINS[0], "\n\n")
    assert alignment_problem(smol_tokenizer, "Q", [], DEFAULT_SEPARATOR) == "no steps"


def test_prepare_skips_misaligned_rows_by_chain_id(smol_tokenizer) -> None:
    good = TrainRow("good", "p1", "Q", ("2 + 2 = 4.", "#### 4"), (True, True))
    bad = TrainRow("bad", "p2", "Q", ("a ки\nb", "c"), (True, False))
    examples, skipped = prepare([good, bad], smol_tokenizer, DEFAULT_SEPARATOR)
    assert [e.chain_id for e in examples] == ["good"] and examples[0].labels == (True, True)
    assert [s.chain_id for s in skipped] == ["bad"] and "contains the step separator" in skipped[0].reason
