"""Settings: environment variables, overrides, validation."""

from __future__ import annotations

import pytest

from common.config import Settings, env_var
from common.errors import ConfigError


def test_defaults_without_environment() -> None:
    settings = Settings.from_env({})
    assert settings.shards == ("gpu0", "gpu1")
    assert settings.redis_url == "redis://127.0.0.1:6379/0"
    assert settings.engine == "vllm"


def test_reads_prefixq_variables_with_types() -> None:
    settings = Settings.from_env({
        "PREFIXQ_REDIS_URL": "rediss://user:pw@redis.example:6380/2",
        "PREFIXQ_SHARDS": "a, b ,c",
        "PREFIXQ_MAX_BATCH": "8",
        "PREFIXQ_BATCH_WAIT_MS": "0.5",
        "OTHER_VARIABLE": "ignored",
    })
    assert settings.redis_url == "rediss://user:pw@redis.example:6380/2"
    assert settings.shards == ("a", "b", "c")
    assert settings.max_batch == 8
    assert settings.batch_wait_ms == 0.5


def test_unknown_prefixq_variable_is_an_error() -> None:
    with pytest.raises(ConfigError, match="PREFIXQ_MAX_BATCHES: unknown setting"):
        Settings.from_env({"PREFIXQ_MAX_BATCHES": "8"})


def test_malformed_number_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="PREFIXQ_MAX_INFLIGHT: cannot read 'lots'"):
        Settings.from_env({"PREFIXQ_MAX_INFLIGHT": "lots"})


def test_overrides_win_and_none_is_skipped() -> None:
    settings = Settings.from_env({"PREFIXQ_MAX_BATCH": "8"}, max_batch=16, redis_url=None)
    assert settings.max_batch == 16
    assert settings.redis_url == Settings().redis_url


@pytest.mark.parametrize("changes, message", [
    ({"shards": ()}, "at least one shard"),
    ({"shards": ("gpu0", "gpu0")}, "duplicate"),
    ({"shards": ("bad name",)}, "not a valid shard"),
    ({"max_batch": 0}, "max_batch: must be positive"),
    ({"batch_wait_ms": -1.0}, "batch_wait_ms"),
    ({"engine": "tgi"}, "engine"),
    ({"max_batch": 512, "max_inflight": 256}, "must not exceed"),
    ({"result_ttl_s": 0}, "result_ttl_s"),
    ({"kv_publisher": "nats"}, "kv_publisher: .nats. is not one of inline, vllm"),
])
def test_validation(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Settings(**changes)  # type: ignore[arg-type]


def test_env_var_names() -> None:
    assert env_var("redis_url") == "PREFIXQ_REDIS_URL"


@pytest.mark.parametrize(("raw", "expected"), [("1", True), ("on", True), ("TRUE", True), ("0", False),
                                               ("off", False), ("no", False)])
def test_switches_read_common_spellings(raw: str, expected: bool) -> None:
    assert Settings.from_env({"PREFIXQ_KV_EVENTS": raw}).kv_events is expected


def test_a_malformed_switch_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="PREFIXQ_KV_EVENTS"):
        Settings.from_env({"PREFIXQ_KV_EVENTS": "maybe"})
