"""`export trl --check-tokenizer`: after TRL's PRMTrainer tokenization (embedded model's tokenizer) every
labelled step sits on exactly one label position, and a row where it does not fails the export by its id."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prm_factory.commands.dataset import register
from prm_factory.exports.formats import ExportError, ExportOptions, check_trl_tokenization, export_table
from prm_factory.exports.tokenizer_check import TrainerSettings, check_row, load_tokenizer
from prm_factory.storage.dataset import Dataset

DEFAULTS = TrainerSettings()


@pytest.fixture(scope="module")
def model_dir() -> Path:
    from prm_factory.sampling.model_prep import prepare_default_model

    return prepare_default_model()


@pytest.fixture(scope="module")
def tokenizer(model_dir):
    return load_tokenizer(model_dir)


@pytest.fixture
def dataset_with_a_bad_step(tmp_path, run_factory) -> tuple[Dataset, str]:
    """Two problems' chains; one step of one chain holds a line break, the trainer's step separator."""
    records = run_factory("a", n_problems=2)
    bad = records.steps[1]
    records.steps[1] = dataclasses.replace(bad, text="step 1 starts\nand goes on")
    data = Dataset(str(tmp_path / "ds"))
    data.commit_run(*records.args())
    return data, bad.chain_id


def _row(completions: list[str], labels: list[bool | None], prompt: str = "What is 2 + 3?") -> dict:
    return {"chain_id": "c", "prompt": prompt, "completions": completions, "labels": labels}


def test_trainer_defaults_come_from_prm_config() -> None:
    resolved = DEFAULTS.resolved()
    assert resolved.step_separator == "\n" and resolved.max_length == 1024
    assert resolved.max_completion_length is None


def test_clean_rows_pass(tokenizer) -> None:
    assert check_row(_row(["2 + 3 = 5", "The answer is 5."], [True, False]), tokenizer, DEFAULTS) is None
    assert check_row(_row(["3 * 4 = 12"], [False]), tokenizer, TrainerSettings(step_separator=" ки")) is None


def test_each_way_of_misaligning_is_named(tokenizer) -> None:
    steps = ["2 + 3 = 5", "The answer is 5."]
    first_step_ends = 1 + len(tokenizer.encode("What is 2 + 3?" + steps[0] + "\n", add_special_tokens=False))
    truncated = check_row(_row(steps, [True, True]), tokenizer, TrainerSettings(max_length=first_step_ends))
    assert truncated is not None and truncated.startswith("truncation keeps 1 of 2 labelled steps")
    cut = check_row(_row(steps, [True, True]), tokenizer, TrainerSettings(max_completion_length=4))
    assert cut is not None and cut.startswith("truncation keeps 0 of 2")
    inner = check_row(_row(["2 + 3\n= 5", "done"], [True, True]), tokenizer, DEFAULTS)
    assert inner is not None and "step 0 contains the step separator" in inner
    # a space separator: "5" + " " + "The" is three tokens step by step, but "5 The" reads " The" as one
    two_ways = check_row(_row(["5", "The"], [True, True]), tokenizer, TrainerSettings(step_separator=" "))
    assert two_ways is not None and "step 1" in two_ways and "tokenize differently" in two_ways
    # "\n\n" alone is one token, but between two lines of text it is two: the trainer and a reader disagree
    blank_line = TrainerSettings(step_separator="\n\n")
    two_tokens = check_row(_row(["2 + 3 = 5.", "The answer is 5."], [True, True]), tokenizer, blank_line)
    assert two_tokens is not None and two_tokens.startswith("step 1 and the separator '\\n\\n' tokenize")
    multi_line = _row(["Step 1: add\n2 + 3 = 5.", "Step 2: The answer is 5."], [True, True])
    assert check_row(multi_line, tokenizer, TrainerSettings(step_separator=" ки\n")) is None
    empty = check_row(_row(steps, [True, True]), tokenizer, TrainerSettings(step_separator=""))
    assert empty is not None and "encodes to no tokens" in empty
    unlabeled = check_row(_row(steps, [True, None]), tokenizer, DEFAULTS)
    assert unlabeled == "step 1 has no label"
    assert check_row(_row(steps, [True]), tokenizer, DEFAULTS) == "2 steps but 1 labels"


def test_export_check_names_every_bad_row_and_only_those(dataset_with_a_bad_step, model_dir) -> None:
    data, bad_chain = dataset_with_a_bad_step
    table = export_table(data, "trl", None, ExportOptions(label="verifier"))
    assert table.num_rows == 4
    with pytest.raises(ExportError) as failure:
        check_trl_tokenization(table, "trl", model_dir, DEFAULTS)
    message = str(failure.value)
    assert message.startswith("1 of 4 rows would train misaligned")
    assert f"{bad_chain}: step 1 contains the step separator" in message
    others = set(table["chain_id"].to_pylist()) - {bad_chain}
    assert not any(chain in message for chain in others)
    good = table.filter([chain != bad_chain for chain in table["chain_id"].to_pylist()])
    assert check_trl_tokenization(good, "trl", model_dir, DEFAULTS) == 3
    with pytest.raises(ExportError) as truncated:
        check_trl_tokenization(good, "trl", model_dir, TrainerSettings(max_length=16))
    assert str(truncated.value).startswith("3 of 3 rows")


def test_cli_export_fails_without_writing_and_passes_when_clean(
    dataset_with_a_bad_step, model_dir, tmp_path, run_factory, command_app
) -> None:
    bad_data, bad_chain = dataset_with_a_bad_step
    clean_data = Dataset(str(tmp_path / "clean"))
    clean_data.commit_run(*run_factory("a", n_problems=2).args())
    app, out = command_app(register), tmp_path / "trl.parquet"

    def export(data: Dataset, *extra: str):
        args = ["export", "trl", "-o", str(out), "--dataset", data.root, "--label", "verifier", *extra]
        return CliRunner().invoke(app, args)

    failed = export(bad_data, "--check-tokenizer", str(model_dir))
    assert failed.exit_code == 1 and bad_chain in failed.output and not out.exists()
    passed = export(clean_data, "--check-tokenizer", str(model_dir))
    assert passed.exit_code == 0, passed.output
    assert "all 4 rows align" in passed.output and out.exists()
    out.unlink()
    truncated = export(clean_data, "--check-tokenizer", str(model_dir), "--max-length", "16")
    assert truncated.exit_code == 1 and "truncation keeps" in truncated.output and not out.exists()
    missing = export(clean_data, "--check-tokenizer", str(tmp_path / "nowhere"))
    assert missing.exit_code == 1 and "tokenizer folder not found" in missing.output


def _tagged(tag: str, steps: list[str]) -> str:
    return "What is 2 + 3?\n" + "\n".join(f"{step} {tag}" for step in steps)


def test_openrlhf_placeholder_must_be_one_token_in_place(tokenizer) -> None:
    from prm_factory.exports.tokenizer_check import check_placeholder_row, placeholder_problem

    steps = ["2 + 3 = 5", "The answer is 5."]
    two_tokens = placeholder_problem("ки", tokenizer)  # Math-Shepherd's tag is two SmolLM2 tokens
    assert two_tokens is not None and "encodes to 2 tokens" in two_tokens and "<file_sep>" in two_tokens
    merged = placeholder_problem("§", tokenizer)  # one token alone, but " §" after a space is another
    assert merged is not None and "merges with the text around it" in merged
    assert placeholder_problem("<file_sep>", tokenizer) is None
    row = {"input": _tagged("<file_sep>", steps), "value": ["+", "-"]}
    assert check_placeholder_row(row, "openrlhf", "<file_sep>", tokenizer) is None
    cut = check_placeholder_row(row, "openrlhf", "<file_sep>", tokenizer, max_length=12)
    assert cut is not None and cut.startswith("truncation keeps")
    extra = {"input": _tagged("<file_sep>", ["2 + 3 <file_sep> = 5", "done"]), "value": ["+", "+"]}
    assert "3 placeholder tokens for 2" in (
        check_placeholder_row(extra, "openrlhf", "<file_sep>", tokenizer) or ""
    )


def test_math_shepherd_tag_and_label_text_line_up(tokenizer) -> None:
    from prm_factory.exports.tokenizer_check import check_placeholder_row

    steps = ["2 + 3 = 5", "The answer is 5."]
    labelled = "What is 2 + 3?\n2 + 3 = 5 +\nThe answer is 5. -"
    assert (
        check_placeholder_row(
            {"input": _tagged("§", steps), "label": labelled}, "math-shepherd", "§", tokenizer
        )
        is None
    )
    # an added token keeps its own space token, " +" does not: every label would be read one token off
    shifted = check_placeholder_row(
        {"input": _tagged("<file_sep>", steps), "label": labelled}, "math-shepherd", "<file_sep>", tokenizer
    )
    assert shifted is not None and "not one token after a space" in shifted


def test_openrlhf_export_check_fails_on_the_default_tag_and_passes_with_a_single_token_one(
    tmp_path, run_factory, model_dir
) -> None:
    data = Dataset(str(tmp_path / "ds"))
    data.commit_run(*run_factory("a", n_problems=2).args())
    table = export_table(data, "openrlhf", None, ExportOptions(label="verifier"))
    with pytest.raises(ExportError, match="encodes to 2 tokens"):
        check_trl_tokenization(table, "openrlhf", model_dir, DEFAULTS)
    tagged = export_table(data, "openrlhf", None, ExportOptions(label="verifier", placeholder="<file_sep>"))
    assert all(
        text.count("<file_sep>") == len(v)
        for text, v in zip(tagged["input"].to_pylist(), tagged["value"].to_pylist(), strict=True)
    )
    assert check_trl_tokenization(tagged, "openrlhf", model_dir, DEFAULTS, "<file_sep>") == tagged.num_rows
    shepherd = export_table(data, "math-shepherd", None, ExportOptions(label="verifier", placeholder="§"))
    assert check_trl_tokenization(shepherd, "math-shepherd", model_dir, DEFAULTS, "§") == shepherd.num_rows
    with pytest.raises(ExportError, match="checks the chain exports"):
        check_trl_tokenization(table, "steps", model_dir, DEFAULTS)
