#!/usr/bin/env bash
# README command 1: set up this machine, then answer examples/documents.jsonl with the built-in
# model on two local workers (one per CPU core) and a private Redis; stops all it started.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1
exec "${PYTHON:-python3}" -m producer.cli demo "$@"
