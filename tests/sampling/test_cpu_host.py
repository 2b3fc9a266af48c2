"""The engine's host-dependent choices: dtype from CPU flags, thread binding from usable cores."""

from __future__ import annotations

import os

import pytest

from prm_factory.sampling.cpu_host import (
    COMPILE_CACHE_ENV,
    HostCpu,
    _cpu_list,
    choose_cpu_engine,
    choose_dtype,
    choose_eager,
    choose_thread_env,
    detect_host,
    parse_cpuinfo,
)

AVX2 = frozenset({"sse4_2", "avx", "avx2", "fma"})
AVX512 = AVX2 | {"avx512f", "avx512bw", "avx512_vnni"}  # Skylake/Cascade Lake: AVX-512 but no bf16
SAPPHIRE = AVX512 | {"avx512_bf16", "amx_bf16", "amx_int8"}

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC
flags\t\t: fpu sse avx avx2 fma
processor\t: 1
model name\t: AMD EPYC
flags\t\t: fpu sse avx avx2 fma
"""


def test_parse_cpuinfo_reads_the_first_processor() -> None:
    flags, model = parse_cpuinfo(CPUINFO)
    assert model == "AMD EPYC" and "avx2" in flags and "avx512f" not in flags
    assert parse_cpuinfo("") == (frozenset(), "")


@pytest.mark.parametrize(
    ("flags", "expected"),
    [(AVX2, "float32"), (AVX512, "float32"), (SAPPHIRE, "bfloat16"), (frozenset(), "float32")],
)
def test_auto_dtype_is_bfloat16_only_with_native_bf16(flags: frozenset[str], expected: str) -> None:
    dtype, reason = choose_dtype("auto", flags, on_cpu=True)
    assert dtype == expected and reason.startswith("auto")


def test_an_explicit_dtype_wins_and_a_gpu_keeps_auto() -> None:
    assert choose_dtype("bfloat16", AVX2, on_cpu=True) == ("bfloat16", "set in the config")
    assert choose_dtype("float16", SAPPHIRE, on_cpu=False)[0] == "float16"
    assert choose_dtype("auto", AVX2, on_cpu=False)[0] == "auto"


def test_all_threads_binds_every_usable_core_and_reserves_none() -> None:
    env, reason = choose_thread_env("all", (0, 1), {})
    assert env == {"VLLM_CPU_OMP_THREADS_BIND": "0-1", "VLLM_CPU_NUM_OF_RESERVED_CPU": "0"}
    assert "all 2" in reason


def test_vllm_threads_and_a_single_core_leave_vllm_binding() -> None:
    assert choose_thread_env("vllm", (0, 1, 2, 3), {})[0] == {}
    assert choose_thread_env("all", (3,), {})[0] == {}


def test_a_user_setting_wins_over_the_choice() -> None:
    env, reason = choose_thread_env("all", (0, 1), {"VLLM_CPU_OMP_THREADS_BIND": "1"})
    assert env == {} and "VLLM_CPU_OMP_THREADS_BIND" in reason


def test_an_unknown_threads_value_is_refused() -> None:
    with pytest.raises(ValueError, match="threads"):
        choose_thread_env("half", (0, 1), {})


def test_cpu_list_compacts_ranges() -> None:
    assert _cpu_list([0, 1, 2, 3, 6]) == "0-3,6"
    assert _cpu_list([5]) == "5"
    assert _cpu_list([2, 0, 1, 8, 9]) == "0-2,8-9"


def test_the_record_names_flags_cores_and_reasons() -> None:
    host = HostCpu(AVX2, (0, 1), "AMD EPYC")
    record = choose_cpu_engine("auto", "all", host, {}, on_cpu=True).as_record()
    assert record["dtype"] == "float32" and record["cpu_flags"] == ["avx2"] and record["cpus"] == [0, 1]
    assert record["env"] == {
        "VLLM_CPU_NUM_OF_RESERVED_CPU": "0",
        "VLLM_CPU_OMP_THREADS_BIND": "0-1",
        "VLLM_USE_AOT_COMPILE": "1",  # loads with sampling.vllm_plugins' fix, whatever torch's version
        "TORCHINDUCTOR_ERROR_ON_CUSTOM_OP_ALIASING": "0",  # the same compile key with and without CI set
    }
    gpu = choose_cpu_engine("auto", "all", host, {}, on_cpu=False)
    assert gpu.env == {} and gpu.dtype == "auto"


def test_detect_host_reads_this_machine() -> None:
    host = detect_host()
    assert host.cpus and all(isinstance(c, int) for c in host.cpus)


def test_the_compile_cache_setting_is_cpu_only_and_a_user_value_wins() -> None:
    host = HostCpu(AVX2, (0, 1), "AMD EPYC")
    assert choose_cpu_engine("auto", "vllm", host, {}, on_cpu=True).env == COMPILE_CACHE_ENV
    given = {"VLLM_USE_AOT_COMPILE": "0", "TORCHINDUCTOR_ERROR_ON_CUSTOM_OP_ALIASING": "1"}
    assert choose_cpu_engine("auto", "vllm", host, given, on_cpu=True).env == {}
    assert choose_cpu_engine("auto", "vllm", host, {}, on_cpu=False).env == {}


def test_auto_threads_bind_all_cores_only_on_an_idle_machine() -> None:
    idle, reason = choose_thread_env("auto", (0, 1), {}, load=0.4)
    assert idle["VLLM_CPU_OMP_THREADS_BIND"] == "0-1" and "auto: load average 0.4" in reason
    busy, reason = choose_thread_env("auto", (0, 1), {}, load=3.0)
    assert busy == {} and "3.0 > 1 of 2" in reason
    assert choose_thread_env("auto", (0, 1, 2, 3), {}, load=2.5)[0]  # 4 cores: up to 3 busy is still idle
    assert choose_thread_env("auto", (0,), {}, load=0.0)[0] == {}  # one core: nothing to bind


def test_the_run_default_is_auto() -> None:
    from prm_factory.config.run_config import ModelConfig

    assert ModelConfig().cpu_threads == "auto"
    assert ModelConfig().enforce_eager == "auto"


@pytest.mark.parametrize(
    ("flags", "on_cpu", "eager"),
    [(AVX2, True, True), (AVX512, True, True), (SAPPHIRE, True, False), (AVX2, False, False)],
)
def test_auto_eager_only_where_the_cpu_computes_in_float32(
    flags: frozenset[str], on_cpu: bool, eager: bool
) -> None:
    """Eager generated as fast as compiled on a float32 CPU and started sooner; bf16 CPUs (not measured eager)
    and GPUs (CUDA graphs) stay compiled."""
    host = HostCpu(flags, (0, 1))
    choice = choose_cpu_engine("auto", "all", host, {}, on_cpu=on_cpu, eager="auto")
    assert choice.eager is eager and choice.eager_reason.startswith("auto: ")
    assert choice.as_record()["enforce_eager"] is eager


def test_an_explicit_eager_setting_wins_and_a_bad_one_is_refused() -> None:
    assert choose_eager(False, "float32", on_cpu=True) == (False, "set in the config")
    assert choose_eager(True, "bfloat16", on_cpu=False) == (True, "set in the config")
    assert choose_eager("auto", "float16", on_cpu=True)[0] is False  # an explicit dtype other than float32
    with pytest.raises(ValueError, match="enforce_eager"):
        choose_eager("sometimes", "float32", on_cpu=True)


def test_busy_cores_reads_proc_stat_and_is_none_where_it_cannot(tmp_path) -> None:
    import threading
    import time

    from prm_factory.sampling.cpu_host import busy_cores, tree_jiffies

    assert busy_cores(0.01, tmp_path / "missing") is None
    frozen = tmp_path / "stat"
    frozen.write_text("cpu  10 0 10 100 0 0 0 0 0 0\n")
    assert busy_cores(0.01, frozen) is None  # no time passed between the readings
    # Spin for one second of this process's CPU time, not of wall time: on a loaded machine a wall second
    # may hold half a second of CPU (CI saw 49 jiffies), and the check below is about reading, not speed.
    cpu_stop, wall_stop = time.process_time() + 1.0, time.monotonic() + 60.0

    def spin() -> None:
        while time.process_time() < cpu_stop and time.monotonic() < wall_stop:
            pass

    own_before = tree_jiffies(os.getpid())  # read outside the spin: /proc reads crawl beside a busy thread
    spinner = threading.Thread(target=spin)
    spinner.start()
    busy = busy_cores(0.4)
    spinner.join()
    own_after = tree_jiffies(os.getpid())
    assert busy is not None and busy >= 0.5  # one core spinning (more if the machine is busy)
    # what exclude_tree subtracts: the CPU second of spin shows in this process's own jiffies (100 per second)
    assert own_before is not None and own_after is not None and own_after - own_before >= 80


def test_busy_cores_leaves_out_the_excluded_tree_in_the_same_window(tmp_path, monkeypatch) -> None:
    """Both readings from one window: two real windows apart differ by whatever else the host ran."""
    import prm_factory.sampling.cpu_host as cpu_host

    stat = tmp_path / "stat"
    stat.write_text("cpu  100 0 100 800 0 0 0 0 0 0\n")  # busy 200 of 1000
    own = iter([50, 50 + 150])  # the excluded tree used 150 jiffies in the window

    def sleep(_: float) -> None:
        stat.write_text("cpu  300 0 200 1300 0 0 0 0 0 0\n")  # busy 500 of 1800: +300 of +800

    monkeypatch.setattr(cpu_host.time, "sleep", sleep)
    monkeypatch.setattr(cpu_host, "tree_jiffies", lambda root: next(own))
    monkeypatch.setattr(cpu_host.os, "cpu_count", lambda: 2)
    assert cpu_host.busy_cores(0.3, stat, exclude_tree=1) == round((300 - 150) / 800 * 2, 2)
    stat.write_text("cpu  100 0 100 800 0 0 0 0 0 0\n")
    own = iter([50, 10])  # a child exited meanwhile: the tree shrank, nothing is subtracted
    assert cpu_host.busy_cores(0.3, stat, exclude_tree=1) == round(300 / 800 * 2, 2)
    stat.write_text("cpu  100 0 100 800 0 0 0 0 0 0\n")
    own = iter([50, 50 + 900])  # more than the whole host: never below zero
    assert cpu_host.busy_cores(0.3, stat, exclude_tree=1) == 0


def test_tree_jiffies_counts_a_process_and_its_children(tmp_path) -> None:
    from prm_factory.sampling.cpu_host import descendants, tree_jiffies

    def proc(pid: int, ppid: int, utime: int, stime: int) -> None:
        (tmp_path / str(pid)).mkdir()
        fields = ["S", str(ppid)] + ["0"] * 9 + [str(utime), str(stime)] + ["0"] * 5
        (tmp_path / str(pid) / "stat").write_text(f"{pid} (a (b) c) " + " ".join(fields) + "\n")

    proc(10, 1, 5, 1)
    proc(11, 10, 3, 0)
    proc(12, 11, 2, 2)
    proc(20, 1, 100, 100)  # another tree
    assert tree_jiffies(10, tmp_path) == 13 and tree_jiffies(11, tmp_path) == 7
    assert tree_jiffies(99, tmp_path) is None
    assert tree_jiffies(os.getpid()) is not None  # this machine's /proc
    assert sorted(descendants(10, tmp_path)) == [11, 12] and descendants(12, tmp_path) == []
    assert descendants(99, tmp_path) == [] and descendants(10, tmp_path / "missing") == []


def test_descendants_finds_a_live_child_process() -> None:
    import subprocess
    import sys

    from prm_factory.sampling.cpu_host import descendants

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in descendants(os.getpid())
    finally:
        child.kill()
        child.wait()
    assert child.pid not in descendants(os.getpid())


def test_the_compile_key_reads_the_same_with_and_without_ci_set() -> None:
    """torch's custom-op aliasing default follows `CI`, and vLLM's AOT cache key holds it: with the pinned
    value an engine warmed under CI=true and a run without CI find the same compiled model."""
    import subprocess
    import sys

    probe = "import torch._functorch.config as c; print(c.error_on_custom_op_aliasing)"

    def read(env: dict[str, str]) -> str:
        command = [sys.executable, "-c", probe]
        return subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout.strip()

    seen = set()
    for ci in ({"CI": "true"}, {}):
        # a running engine of this process (the session's) holds the pinned value in os.environ
        env = {k: v for k, v in os.environ.items() if k != "CI" and k not in COMPILE_CACHE_ENV} | ci
        seen.add(read(env | COMPILE_CACHE_ENV))
        if ci:
            assert read(env) == "True"  # what made the keys differ: torch's default under CI
    assert seen == {"False"}
