"""A step's last token: found from the tokenizer's offsets, or from prefix lengths without them."""

from __future__ import annotations

from prm_factory.reward.tokens import token_ends


class WordTokenizer:
    """Whitespace words as tokens, with offsets (the fast tokenizers' interface)."""

    def __call__(self, text, add_special_tokens=False, return_offsets_mapping=False):
        import re

        return {"offset_mapping": [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]}


class PrefixOnly:
    """A tokenizer without offsets (a slow one): only `encode`."""

    def __call__(self, *args, **kwargs):
        raise NotImplementedError

    def encode(self, text, add_special_tokens=False):
        return text.split()


def test_each_step_ends_on_its_last_token() -> None:
    response = "a b c\n\nd e"
    assert token_ends(WordTokenizer(), response, [5, 10]) == [2, 4]
    assert token_ends(PrefixOnly(), response, [5, 10]) == [2, 4]
    assert token_ends(WordTokenizer(), "", [0]) == [None]
    assert token_ends(WordTokenizer(), response, []) == []
