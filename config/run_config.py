"""The one run config: every stage's settings, validated at the edge by pydantic.

A config file is TOML; any field left out takes the default below, which is the embedded demo run
(SmolLM2-135M-Instruct on CPU, a few GSM8K problems, exhaustive rollouts, a local Delta dataset).
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_settings import EnvSettingsSource, SettingsError

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_GSM8K = REPO_ROOT.parent / "shared" / "data" / "gsm8k" / "train.jsonl"
SHIPPED_CODE_PROBLEMS = REPO_ROOT / "data" / "code_problems" / "humaneval_style.jsonl"


def default_dataset_root() -> Path:
    """Where datasets go unless the config or PRM_FACTORY_DATASET says otherwise: ./prm-datasets/default
    (a folder no Python package can be named like, so a run never shadows an import such as `datasets`)."""
    return Path(os.environ.get("PRM_FACTORY_DATASET", Path.cwd() / "prm-datasets" / "default")).resolve()


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SyntheticProblemsConfig(_Section):
    """Knobs of `problems.source = "synthetic"` (schemas.synthetic.SyntheticSpec): generated arithmetic word
    problems with the true value of every step."""

    seed: int = 0
    count: int = Field(1000, ge=1)  # problems the seed defines; offset, limit, skip_labeled pick from them
    steps: int = Field(2, ge=1, le=20)
    min_value: int = Field(2, ge=1)  # start amounts and numbers added or taken away
    max_value: int = Field(20, ge=1)
    max_factor: int = Field(5, ge=2)  # multipliers and divisors: 2..max_factor
    max_result: int = Field(1000, ge=1)  # bound on every intermediate value
    operations: str = Field("+-*/", pattern=r"^[-+*/]+$")
    distractors: int = Field(0, ge=0)  # irrelevant facts with numbers

    @model_validator(mode="after")
    def _ranges(self) -> SyntheticProblemsConfig:
        if self.min_value > self.max_value or self.max_result < self.max_value:
            raise ValueError("need min_value <= max_value <= max_result")
        return self


class ProblemsConfig(_Section):
    # gsm8k: GSM8K-format jsonl (math); code: HumanEval- or MBPP-shape jsonl, shape decided per row;
    # synthetic: generated arithmetic word problems ([problems.synthetic]), no file
    source: Literal["gsm8k", "code", "synthetic"] = "gsm8k"
    path: str | None = None  # None: the shared GSM8K train split, or the shipped code problems
    offset: int = Field(0, ge=0)
    limit: int = Field(4, ge=1)
    # true: take the first `limit` problems from `offset` on that have no chains in the dataset yet, so
    # repeated (scheduled) runs label fresh problems instead of the same slice
    skip_labeled: bool = False
    synthetic: SyntheticProblemsConfig = SyntheticProblemsConfig()

    @property
    def domain(self) -> str:
        return "code" if self.source == "code" else "math"

    def resolved_path(self) -> Path:
        if self.path is not None:
            return Path(self.path).expanduser()
        return SHIPPED_CODE_PROBLEMS if self.source == "code" else SHARED_GSM8K


def server_root(url: str) -> str:
    """A server's root as the samplers want it: OpenAI clients are usually given `.../v1`, and the samplers
    add `/v1` themselves, so a trailing `/v1` (or slash) is dropped rather than requested twice.

    >>> server_root("http://gpu1:8000/v1/"), server_root("http://gpu1:8000")
    ('http://gpu1:8000', 'http://gpu1:8000')
    """
    root = url.strip().rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


class ModelConfig(_Section):
    path: str | None = None  # None: the embedded SmolLM2-135M-Instruct
    # vllm: an offline engine in this process; openai: `base_urls` of OpenAI-compatible servers
    # (`vllm serve` on GPU nodes) serving the checkpoint at `path` (read here for its tokenizer and hash)
    backend: Literal["vllm", "openai"] = "vllm"
    base_urls: tuple[str, ...] = ()
    served_model_name: str | None = None  # the servers' model name; default: the checkpoint folder name
    # backend = openai: send each prompt with its own seed (from `seed` and the prompt, as the offline engine
    # does), one prompt per request, so a prefix's draws do not depend on what shares its request. The
    # servers must take per-request seeds: vLLM's GPU builds do; the CPU build only with chunked prefill off
    # (`vllm serve --no-enable-chunked-prefill`). Off: the servers' start seed only.
    request_seeds: bool = False
    # offline engine: vLLM's batch-invariant kernels, so a request draws the same tokens whatever shares its
    # batch (slower). auto: on where vLLM has them (CUDA compute capability >= 8.0); elsewhere a run promises
    # the same tokens only for the same batches (runs.reproducibility; sampling/reproducibility.py)
    batch_invariant: Literal["auto", "on", "off"] = "auto"
    seed: int = 0
    max_model_len: int = Field(2048, ge=256)
    # auto: bfloat16 where the CPU computes it natively (avx512_bf16 / AMX), float32 on other CPUs, the
    # checkpoint's own dtype on a GPU (sampling.cpu_host); an explicit value always wins
    dtype: str = "auto"
    # CPU engine only: vllm = vLLM's binding (one core per worker reserved for its scheduler process);
    # all = every usable core computes; auto = all on an otherwise idle machine, vllm on a busy one
    # (sampling.cpu_host.choose_thread_env; bench_sampling --engine-settings compares them on your host)
    cpu_threads: Literal["auto", "all", "vllm"] = "auto"
    # auto: eager on a CPU that computes in float32 (as fast there, starts sooner, nothing to compile),
    # compiled on bf16 CPUs and GPUs (sampling.cpu_host.choose_eager); true / false always win
    enforce_eager: bool | Literal["auto"] = "auto"
    # where vLLM's engine core runs: separate = its own processes (vLLM's default); inline = in the run's
    # process (starts sooner; vLLM reseeds the process's global RNGs); auto = inline for an eager float32
    # CPU engine on an idle host, where it started 33 s sooner at the same speed and wrote the same rows,
    # separate elsewhere (sampling.vllm_sampler.process_plan). Not a label setting: every value hashes alike
    engine_process: Literal["auto", "separate", "inline"] = "auto"
    enable_prefix_caching: bool = True
    # VLLM_CPU_KVCACHE_SPACE: 1 GiB (23k tokens of SmolLM2) ran the default rollouts 10 % slower than 2 GiB
    # (174 against 158 s on a 2-core AVX2 machine), for 1 GiB more of the run's peak (4.6 -> 5.6 GiB used)
    cpu_kv_cache_gib: int = Field(2, ge=1)
    gpu_memory_utilization: float = Field(0.85, gt=0, le=1)
    # GPU nodes: vLLM's parallelism and batching (the CPU build runs tensor parallel over NUMA nodes only)
    tensor_parallel_size: int = Field(1, ge=1)
    pipeline_parallel_size: int = Field(1, ge=1)
    data_parallel_size: int = Field(1, ge=1)
    quantization: str | None = None  # e.g. "awq", "gptq", "fp8"; None: as the checkpoint says
    max_num_seqs: int | None = Field(None, ge=1)  # None: vLLM's default
    max_num_batched_tokens: int | None = Field(None, ge=1)
    # any other vLLM engine argument, passed unchanged (checked against the installed vLLM at load)
    engine_args: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known_engine_args(self) -> ModelConfig:
        from prm_factory.config.engine_args import engine_args_problems, vllm_engine_arg_names

        problems = engine_args_problems(
            self.engine_args, vllm_engine_arg_names() if self.engine_args else None
        )
        if problems:
            raise ValueError("engine_args." + problems[0])
        return self

    @field_validator("base_urls")
    @classmethod
    def _server_roots(cls, urls: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(server_root(url) for url in urls)

    @model_validator(mode="after")
    def _request_seeds_are_for_servers(self) -> ModelConfig:
        """The offline engine seeds each request itself (runs.engine.seed_mode); here it would do nothing."""
        if self.request_seeds and self.backend != "openai":
            raise ValueError(
                "request_seeds is for backend = openai; the offline engine (backend = vllm) already seeds "
                "each request where the build allows it"
            )
        return self

    @model_validator(mode="after")
    def _one_process_engine_has_no_data_parallelism(self) -> ModelConfig:
        """vLLM's offline engine refuses data_parallel_size > 1 in one process ("not supported for
        single-process usage"), deep inside an engine start: say so at load, with the two ways that work."""
        if self.backend == "vllm" and self.data_parallel_size > 1:
            raise ValueError(
                f"data_parallel_size = {self.data_parallel_size} needs a server: vLLM's in-process engine "
                "(backend = vllm) runs one data-parallel rank; run one shard per GPU "
                "(prm-factory run --shards N) or `vllm serve --data-parallel-size N` "
                "with backend = openai (docs/gpu.md)"
            )
        return self


class SamplingConfig(_Section):
    n: int = Field(4, ge=1)
    temperature: float = Field(0.7, ge=0)
    top_p: float = Field(0.95, gt=0, le=1)
    max_tokens: int = Field(256, ge=1)


class SegmentationConfig(_Section):
    mode: Literal["auto", "line", "blank_line", "step_marker"] = "auto"  # math chains
    code_mode: Literal["block", "statement", "line"] = "block"  # code chains


class VerifierConfig(_Section):
    timeout_seconds: float = Field(2.0, gt=0)
    last_number_fallback: bool = True


class CodeSandboxConfig(_Section):
    pool_size: int = Field(2, ge=1)  # warm containers
    memory_mb: int = Field(256, ge=32)
    pids: int = Field(64, ge=8)
    cpus: float = Field(1.0, gt=0)
    wall_seconds: float = Field(10.0, gt=0)
    engine_wait_seconds: float = Field(60.0, ge=0)  # a restarting Docker engine is waited for this long


class RolloutConfig(_Section):
    strategy: str = "exhaustive"
    k: int = Field(4, ge=1)
    max_tokens: int = Field(160, ge=1)
    temperature: float = Field(0.7, ge=0)
    top_p: float = Field(0.95, gt=0, le=1)
    max_steps: int = Field(4, ge=0)  # step prefixes probed per chain; later steps get no MC value


class DatasetConfig(_Section):
    root: str | None = None  # None: default_dataset_root()


class ResumeConfig(_Section):
    # Stage results cached under <dataset root>/_cache by content key; a rerun after a crash skips them.
    enabled: bool = True
    # Sampling and rollouts are cached per chunk of this many problems: a crash loses at most one chunk.
    # Each chunk is one engine batch, so larger chunks batch better (raise it on a GPU).
    chunk_problems: int = Field(16, ge=1)
    # `label` and `relabel` label, stage and resume this many chains at a time: their memory is bounded by
    # it, and a crash loses at most one such chunk.
    chunk_chains: int = Field(512, ge=1)


class RunnerConfig(_Section):
    # threads: one verify task in this process; processes: verification chunks on `workers` local
    # processes; dask: chunks on a Dask cluster (needs prefect-dask; `dask_address` None starts a local
    # cluster of `workers` processes)
    task_runner: Literal["threads", "processes", "dask"] = "threads"
    dask_address: str | None = None
    workers: int = Field(2, ge=1)
    verify_chunk: int = Field(16, ge=1)  # chains per verification task


class JudgeConfig(_Section):
    # The `judge` label source: a generative critic (ProcessBench's critique prompt) names each chain's
    # earliest wrong step. It runs on the run's own engine, or on OpenAI-compatible servers (`base_urls`)
    # serving `model_path`'s checkpoint. Off by default: the embedded 135M model is no judge.
    enabled: bool = False
    budget: Literal["all", "disputed"] = "disputed"  # disputed: only chains where the other sources disagree
    base_urls: list[str] = []  # empty: the run's engine ([model])
    model_path: str | None = None  # the judge's checkpoint (tokenizer, chat template); None: [model]
    served_model_name: str | None = None
    max_tokens: int = Field(1024, ge=16)

    @field_validator("base_urls")
    @classmethod
    def _server_roots(cls, urls: list[str]) -> list[str]:
        return [server_root(url) for url in urls]


class ConsensusConfig(_Section):
    """How a step's `p_correct` becomes its consensus (labels/consensus.py): `negative` where P(wrong) is at
    least `negative_at`, `positive` where P(right) is at least `positive_at`, `disputed` between.
    `prior_correct` is the share of right steps expected before any vote (None: the voting sources' tables'
    own base rates, so a lone vote reads its measured precision); `tables` names a calibration table file per
    source over the shipped ones (labels/calibration.py; `relabel --calibrate-from-audit` writes one)."""

    negative_at: float = Field(0.95, gt=0.5, lt=1.0)
    positive_at: float = Field(0.95, gt=0.5, lt=1.0)
    prior_correct: float | None = Field(None, gt=0.0, lt=1.0)
    tables: dict[str, str] = {}


class LabelsConfig(_Section):
    # The label sources a run uses beside `verifier` and `mc`, which always run (they grade outcomes and
    # values): names registered in labels/registry.py (built in, or a package's through the entry-point
    # group `prm_factory.label_sources`) or `package.module:attribute`. `judge` also runs when [judge] is
    # enabled. `options.<name>` are a source's own settings (e.g. `options.prm.checkpoint`).
    sources: list[str] = ["reference"]
    options: dict[str, dict[str, Any]] = {}
    consensus: ConsensusConfig = ConsensusConfig()

    def is_default(self) -> bool:
        return self == LabelsConfig()


class RunConfig(_Section):
    name: str = "default"
    problems: ProblemsConfig = ProblemsConfig()
    model: ModelConfig = ModelConfig()
    sampling: SamplingConfig = SamplingConfig()
    segmentation: SegmentationConfig = SegmentationConfig()
    verifier: VerifierConfig = VerifierConfig()
    sandbox: CodeSandboxConfig = CodeSandboxConfig()
    rollouts: RolloutConfig = RolloutConfig()
    dataset: DatasetConfig = DatasetConfig()
    resume: ResumeConfig = ResumeConfig()
    runner: RunnerConfig = RunnerConfig()
    judge: JudgeConfig = JudgeConfig()
    labels: LabelsConfig = LabelsConfig()

    def dataset_root(self) -> Path:
        return Path(self.dataset.root).expanduser().resolve() if self.dataset.root else default_dataset_root()

    def to_json(self) -> str:
        return json.dumps(self._dump(), sort_keys=True)

    def _dump(self) -> dict[str, Any]:
        """The config as JSON data; `labels` only where it is set (so configs without it keep their hash)."""
        data = self.model_dump(mode="json")
        if self.labels.is_default():
            del data["labels"]
        elif self.labels.consensus == ConsensusConfig():  # configs written before it keep their hash
            del data["labels"]["consensus"]
        return data

    def config_hash(self) -> str:
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]

    def label_config_hash(self, labelers: dict[str, Any] | None = None) -> str:
        """Hash of what decides a step's labels (not where the data goes or which problems are picked).

        `labelers` are the identities of the labelers that ran (verifiers.identity.labeler_identity: name,
        version, code digest), so a changed verifier gives new label rows, never a silent reuse of old ones.
        """
        keys = ("model", "sampling", "segmentation", "verifier", "sandbox", "rollouts", "judge", "labels")
        data = self._dump()
        # where the engine runs decides no label (inline and separate write the same rows): every value hashes
        # as the default of the datasets written before `auto` did, so their steps keep their ids
        data["model"]["engine_process"] = "separate"
        content = {k: data[k] for k in keys if k in data}
        if labelers:
            content["labelers"] = labelers
        payload = json.dumps(content, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


class ConfigError(ValueError):
    """A config that cannot be used, with one line saying where and why."""


ENV_PREFIX = "PRM_FACTORY_"


def env_overrides() -> dict[str, Any]:
    """Config values from `PRM_FACTORY_<SECTION>__<FIELD>` variables (`PRM_FACTORY_SAMPLING__N=8`), as dotted
    keys. pydantic-settings finds, splits and JSON-decodes them (lists, tables); plain values are strings the
    config's own types validate. Names without `__` (PRM_FACTORY_DATASET, PRM_FACTORY_CACHE) are not fields.
    """
    source = EnvSettingsSource(
        RunConfig,  # type: ignore[arg-type]  # only its fields are read, so a plain model does
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        case_sensitive=False,
    )
    prefix = ENV_PREFIX.lower()  # names are matched case-insensitively, as lower case
    source.env_vars = {
        k: v for k, v in source.env_vars.items() if k.startswith(prefix) and "__" in k.removeprefix(prefix)
    }
    try:
        nested = source()
    except SettingsError as err:
        names = ", ".join(sorted(k.upper() for k in source.env_vars))
        raise ConfigError(f"environment ({names}): {err}") from err

    def dotted(table: dict[str, Any], parent: str = "") -> dict[str, Any]:
        flat: dict[str, Any] = {}
        for key, value in table.items():
            flat.update(
                dotted(value, f"{parent}{key}.") if isinstance(value, dict) else {parent + key: value}
            )
        return flat

    return dotted(nested)


def load_config(path: str | Path | None, overrides: dict | None = None) -> RunConfig:
    """Read a TOML config (or the defaults when path is None) and apply dotted overrides, later winning: the
    file, then `PRM_FACTORY_<SECTION>__<FIELD>` variables (`env_overrides`), then `overrides` (`--set`)."""
    data: dict = {}
    if path is not None:
        file = Path(path)
        if not file.exists():
            raise ConfigError(f"config file not found: {file}")
        try:
            data = tomllib.loads(file.read_text())
        except tomllib.TOMLDecodeError as err:
            raise ConfigError(f"{file}: not valid TOML: {err}") from err
    from_env = env_overrides()
    for dotted, value in {**from_env, **(overrides or {})}.items():
        node = data
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    try:
        return RunConfig.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        named = next(
            (k for k in from_env if k not in (overrides or {}) and f"{where}.".startswith(f"{k}.")), None
        )
        origin = f" (from {ENV_PREFIX}{named.upper().replace('.', '__')})" if named else ""
        message = first["msg"].removeprefix("Value error, ")
        raise ConfigError(f"{path or 'config'}: field {where}{origin}: {message}") from err
