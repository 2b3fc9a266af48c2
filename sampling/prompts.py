"""Prompts that ask for step-by-step solutions in a shape the segmenter and answer extractor read."""

from __future__ import annotations

MATH_SYSTEM_PROMPT = (
    "You are a careful math tutor. Solve the problem step by step. "
    "Put each step on its own line and show the arithmetic, e.g. '3 * 4 = 12'. "
    "End with a line 'The answer is N.'"
)


def math_user_prompt(question: str) -> str:
    return question.strip()


CODE_SYSTEM_PROMPT = (
    "You are a careful Python programmer. Think step by step in short sentences, then write the "
    "complete function in one ```python code block."
)


def code_user_prompt(problem_text: str) -> str:
    return "Write the Python function described below.\n\n" + problem_text.strip()
