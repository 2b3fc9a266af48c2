import pytest

from prm_factory.sampling.segment import resolve_mode, segment


def spans_match(text: str) -> None:
    for step in segment(text):
        assert text[step.start : step.end] == step.text


@pytest.mark.parametrize(
    ("text", "mode", "expected"),
    [
        ("a = 1\nb = 2\n\nThe answer is 2", "line", ["a = 1", "b = 2", "The answer is 2"]),
        ("a = 1\nb = 2\n\nThe answer is 2", "blank_line", ["a = 1\nb = 2", "The answer is 2"]),
        (
            "Step 1: 2+2=4\nso\nStep 2: The answer is 4",
            "step_marker",
            ["Step 1: 2+2=4\nso", "Step 2: The answer is 4"],
        ),
        ("intro\nStep 1: x\nStep 2: y", "step_marker", ["intro", "Step 1: x", "Step 2: y"]),
        ("  only one line  ", "auto", ["only one line"]),
        ("", "auto", []),
        ("\n\n  \n", "line", []),
    ],
)
def test_segment_modes(text: str, mode: str, expected: list[str]) -> None:
    steps = segment(text, mode)  # type: ignore[arg-type]
    assert [s.text for s in steps] == expected
    assert [s.index for s in steps] == list(range(len(expected)))
    spans_match(text)


def test_auto_prefers_markers_then_paragraphs_then_lines() -> None:
    assert resolve_mode("Step 1: a\nStep 2: b", "auto") == "step_marker"
    assert resolve_mode("a\nb\n\nc", "auto") == "blank_line"
    assert resolve_mode("a\nb\nc", "auto") == "line"


def test_offsets_survive_crlf_and_indentation() -> None:
    text = "  first = 1\r\n\r\n   second = 2  \r\n"
    steps = segment(text, "blank_line")
    assert [s.text for s in steps] == ["first = 1", "second = 2"]
    assert all(text[s.start : s.end] == s.text for s in steps)


def test_unknown_mode_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown segmentation mode"):
        segment("a\nb", "sentences")  # type: ignore[arg-type]
