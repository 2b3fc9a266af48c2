"""A merge source with a repeated key keeps each key's first row and every other row (storage/delta_io.py).

Before issue 48 the kept rows were taken by the wrong index: with a repeated key, a source kept a duplicate
and lost a row of another key. A streamed `label` repeats a problem across its chunks, which showed it."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from prm_factory.storage.delta_io import dedupe_on_keys


def test_the_first_row_of_each_key_is_kept_in_input_order() -> None:
    table = pa.table({"k": ["a", "b", "a", "c", "b", "d"], "v": [1, 2, 3, 4, 5, 6]})
    kept = dedupe_on_keys(table, ["k"])
    assert kept.to_pydict() == {"k": ["a", "b", "c", "d"], "v": [1, 2, 4, 6]}


@given(st.lists(st.sampled_from("abcdefg"), max_size=40))
def test_every_key_survives_once_with_its_first_row(keys: list[str]) -> None:
    table = pa.table({"k": keys, "v": list(range(len(keys)))})
    kept = dedupe_on_keys(table, ["k"]).to_pylist()
    assert kept == [{"k": k, "v": keys.index(k)} for k in dict.fromkeys(keys)]
