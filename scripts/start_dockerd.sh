#!/usr/bin/env bash
# Start the Docker engine if it is not answering yet; idempotent, safe to call from setup and CI.
#
# A dockerd started by a session ends with that session, so every fresh machine and every CI job runs this
# before the sandbox tests. The engine runs in the background with its log in $PRM_DOCKERD_LOG.
set -euo pipefail

LOG="${PRM_DOCKERD_LOG:-/tmp/prm-factory-dockerd.log}"
WAIT_S="${PRM_DOCKERD_WAIT_S:-60}"

if docker info >/dev/null 2>&1; then
  echo "dockerd already answering"
  exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
  echo "start_dockerd: dockerd not found; install it with: apt-get install -y docker.io" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo -n"; else
    echo "start_dockerd: must run as root (or with passwordless sudo) to start dockerd" >&2
    exit 1
  fi
fi

# A stale pid file from a killed engine makes dockerd refuse to start.
if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then
  $SUDO rm -f /var/run/docker.pid
fi

echo "starting dockerd (log: $LOG)"
# setsid: the engine must not die with the shell that started it (a CI step, a setup script).
# env -u LD_PRELOAD: the engine outlives its caller, and a preload the caller had (the vLLM engine's OpenMP
# library from a .venv, when a test restarts dockerd) broke every container start once that .venv was gone
$SUDO env -u LD_PRELOAD setsid dockerd >"$LOG" 2>&1 < /dev/null &

for _ in $(seq 1 "$WAIT_S"); do
  if docker info >/dev/null 2>&1; then
    echo "dockerd is up"
    exit 0
  fi
  sleep 1
done

echo "start_dockerd: dockerd did not answer within ${WAIT_S}s; last log lines from $LOG:" >&2
tail -n 20 "$LOG" >&2 || true
exit 1
