"""Configuration: one dataclass, built once at the edge (CLI or environment), then passed down.

Every environment variable prefixq reads is a field of :class:`Settings`, spelled
``PREFIXQ_<FIELD>`` (``PREFIXQ_REDIS_URL``, ``PREFIXQ_SHARDS``, ...). An unknown ``PREFIXQ_``
variable is an error, not silently ignored. CLI flags override the environment.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from common.errors import ConfigError
from common.keys import is_valid_shard

ENV_PREFIX = "PREFIXQ_"
POLICIES = ("affinity", "round-robin", "random")


def _default_model_cache() -> str:
    return str(Path.home() / ".cache" / "prefixq" / "models")


@dataclass(frozen=True)
class Settings:
    """All of prefixq's settings. Field ``x`` is read from ``PREFIXQ_X``."""

    redis_url: str = "redis://127.0.0.1:6379/0"
    shards: tuple[str, ...] = ("gpu0", "gpu1")
    model: str = ""  # empty: the built-in SmolLM2-135M-Instruct
    model_cache: str = field(default_factory=_default_model_cache)
    engine: str = "vllm"
    max_model_len: int = 4096
    max_batch: int = 64
    batch_wait_ms: float = 2.0
    max_inflight: int = 256
    lookahead_steps: float = 3.0  # pull while the engine has fewer than this many steps of prompts waiting
    steal: bool = True  # a worker short of work takes whole prefix groups from the tail of busier queues
    job_timeout_s: int = 600
    result_ttl_s: int = 7 * 24 * 3600
    max_tokens: int = 128
    max_decoded_bytes: int = 64 * 1024 * 1024
    heartbeat_interval_s: float = 10.0
    block_size: int = 32
    dtype: str = "float32"
    policy: str = "affinity"
    min_match_blocks: int = 1
    min_match_fraction: float = 0.25
    guard_abs_tokens: int = 4096
    guard_rel: float = 1.5
    affinity_ttl_s: int = 3600
    predicted_ttl_s: int = 300  # a prediction's life on a shard whose KV events are live
    kv_events: bool = True  # workers publish vLLM's KV-cache events into the routing state
    kv_publisher: str = "inline"  # inline: prefixq's vLLM plugin sends them as each step ends; vllm: vLLM's
    kv_cache_blocks: int = 0  # 0: vLLM sizes the KV cache; else exactly this many blocks
    blob_ttl_s: int = 24 * 3600
    blob_cache_entries: int = 4096
    max_attempts: int = 3
    shard_down_grace_s: int = 120
    sim_prefill_s_per_token: float = 0.0  # the sim engine (a simulator, for load tests only)
    sim_decode_s_per_token: float = 0.0
    sim_max_running: int = 0  # 0: every request runs at once; else at most this many, the rest queue
    step_trace: bool = False  # benchmarks only: a vLLM engine records every step (it grows)
    log_level: str = "INFO"

    def __post_init__(self) -> None:
        if not self.shards:
            raise ConfigError("shards: at least one shard is needed")
        for shard in self.shards:
            if not is_valid_shard(shard):
                raise ConfigError(f"shards: {shard!r} is not a valid shard name (letters, digits, _ . -)")
        if len(set(self.shards)) != len(self.shards):
            raise ConfigError(f"shards: duplicate names in {','.join(self.shards)}")
        if self.engine not in ("vllm", "sim"):
            raise ConfigError(f"engine: {self.engine!r} is not one of vllm, sim")
        if self.kv_publisher not in ("inline", "vllm"):
            raise ConfigError(f"kv_publisher: {self.kv_publisher!r} is not one of inline, vllm")
        if self.policy not in POLICIES:
            raise ConfigError(f"policy: {self.policy!r} is not one of {', '.join(POLICIES)}")
        if not 0.0 <= self.min_match_fraction <= 1.0:
            raise ConfigError(f"min_match_fraction: must be within [0, 1], got {self.min_match_fraction}")
        if self.guard_rel < 1.0 or self.guard_abs_tokens < 0 or self.min_match_blocks < 1:
            raise ConfigError("guard_rel must be >= 1, guard_abs_tokens >= 0, min_match_blocks >= 1")
        if self.block_size % 16:
            raise ConfigError(f"block_size: must be a multiple of vLLM's 16, got {self.block_size}")
        if self.dtype not in ("float32", "float16", "bfloat16", "auto"):
            raise ConfigError(f"dtype: {self.dtype!r} is not one of float32, float16, bfloat16, auto")
        for name in ("max_model_len", "max_batch", "max_inflight", "job_timeout_s", "max_tokens",
                     "max_decoded_bytes", "block_size", "affinity_ttl_s", "predicted_ttl_s", "blob_ttl_s",
                     "blob_cache_entries", "max_attempts", "shard_down_grace_s"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name}: must be positive, got {getattr(self, name)}")
        if self.kv_cache_blocks < 0:
            raise ConfigError(f"kv_cache_blocks: must not be negative, got {self.kv_cache_blocks}")
        if self.lookahead_steps < 0:
            raise ConfigError(f"lookahead_steps: must not be negative, got {self.lookahead_steps}")
        if self.sim_max_running < 0:
            raise ConfigError(f"sim_max_running: must not be negative, got {self.sim_max_running}")
        if self.sim_prefill_s_per_token < 0 or self.sim_decode_s_per_token < 0:
            raise ConfigError("sim_prefill_s_per_token and sim_decode_s_per_token must not be negative")
        if self.batch_wait_ms < 0:
            raise ConfigError(f"batch_wait_ms: must not be negative, got {self.batch_wait_ms}")
        if self.heartbeat_interval_s <= 0:
            raise ConfigError(f"heartbeat_interval_s: must be positive, got {self.heartbeat_interval_s}")
        if self.result_ttl_s < -1 or self.result_ttl_s == 0:
            raise ConfigError(f"result_ttl_s: must be positive or -1 (keep forever), got {self.result_ttl_s}")
        if self.max_batch > self.max_inflight:
            raise ConfigError(f"max_batch ({self.max_batch}) must not exceed max_inflight ({self.max_inflight})")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Build settings from ``PREFIXQ_*`` variables, then apply ``overrides``.

        Overrides whose value is ``None`` (a CLI flag that was not given) are skipped.
        """
        environ = os.environ if environ is None else environ
        known = {f.name: f for f in fields(cls)}
        values: dict[str, Any] = {}
        for var, raw in environ.items():
            if not var.startswith(ENV_PREFIX):
                continue
            name = var[len(ENV_PREFIX):].lower()
            if name not in known:
                raise ConfigError(f"{var}: unknown setting (known: {', '.join(sorted(known))})")
            values[name] = _parse(var, raw, known[name].type)
        for name, value in overrides.items():
            if name not in known:
                raise ConfigError(f"{name}: unknown setting")
            if value is not None:
                values[name] = value
        return cls(**values)

    @property
    def lease_s(self) -> int:
        """How long a started job's lease lasts without a heartbeat before it is recovered."""
        return max(2, int(3 * self.heartbeat_interval_s + 0.999))

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` applied (and checked)."""
        return dataclasses.replace(self, **changes)


def _parse(var: str, raw: str, type_name: object) -> Any:
    """Turn an environment string into the field's type (annotations are strings here)."""
    try:
        if type_name == "int":
            return int(raw)
        if type_name == "float":
            return float(raw)
        if type_name == "bool":
            value = raw.strip().lower()
            if value in ("1", "true", "yes", "on"):
                return True
            if value in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
        if type_name == "tuple[str, ...]":
            return tuple(part.strip() for part in raw.split(",") if part.strip())
    except ValueError as e:
        raise ConfigError(f"{var}: cannot read {raw!r} as {type_name}") from e
    return raw


def env_var(name: str) -> str:
    """The environment variable behind setting ``name`` (for messages and docs)."""
    return ENV_PREFIX + name.upper()
