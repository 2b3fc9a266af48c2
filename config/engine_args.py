"""vLLM engine arguments a config may pass through unchanged (`[model.engine_args]`), checked at load.

Why read the names from vLLM's source instead of importing it: `import vllm.engine.arg_utils` takes a
minute on a busy 2-core machine, and a config is loaded by every command, also on machines that only talk
to remote servers. The `EngineArgs` dataclass's annotated fields are its engine arguments; `ast` reads
them from the installed file in milliseconds, without running vLLM.
"""

from __future__ import annotations

import ast
import importlib.util
from functools import lru_cache
from pathlib import Path

SET_BY_MODEL_FIELDS = frozenset(
    {
        "model",
        "tokenizer",
        "seed",
        "dtype",
        "max_model_len",
        "enforce_eager",
        "enable_prefix_caching",
        "gpu_memory_utilization",
        "tensor_parallel_size",
        "pipeline_parallel_size",
        "data_parallel_size",
        "quantization",
        "max_num_seqs",
        "max_num_batched_tokens",
    }
)
"""Engine arguments with a `[model]` field of their own: set there, so a run records them one way only."""


def engine_arg_names_in(source: str) -> frozenset[str]:
    """The annotated field names of the `EngineArgs` class in a module's source (empty when absent).

    >>> sorted(engine_arg_names_in("class EngineArgs:\\n    model: str = 'm'\\n    max_num_seqs: int = 1\\n"))
    ['max_num_seqs', 'model']
    """
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == "EngineArgs":
            return frozenset(
                item.target.id
                for item in node.body
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
            )
    return frozenset()


@lru_cache(maxsize=1)
def vllm_engine_arg_names() -> frozenset[str] | None:
    """Engine argument names of the installed vLLM (either build), or None when vLLM is not installed."""
    spec = importlib.util.find_spec("vllm")
    if spec is None or spec.origin is None:
        return None
    source = Path(spec.origin).parent / "engine" / "arg_utils.py"
    try:
        return engine_arg_names_in(source.read_text()) or None
    except OSError:
        return None


def engine_args_problems(engine_args: dict[str, object], known: frozenset[str] | None) -> list[str]:
    """One line per engine argument the config must not pass: one with a `[model]` field of its own, or one
    vLLM does not know (skipped when vLLM is not installed here: the servers that run it will check).

    >>> engine_args_problems({"max_num_seqs": 8, "swap_space": 4, "kv_cache_dtyp": "fp8"},
    ...                      frozenset({"max_num_seqs", "swap_space", "kv_cache_dtype"}))
    ['max_num_seqs: set model.max_num_seqs instead', 'kv_cache_dtyp: not an engine argument of this vLLM']
    """
    problems = []
    for name in engine_args:
        if name in SET_BY_MODEL_FIELDS:
            field = "path" if name in ("model", "tokenizer") else name
            problems.append(f"{name}: set model.{field} instead")
        elif known is not None and name not in known:
            problems.append(f"{name}: not an engine argument of this vLLM")
    return problems
