"""docker-compose.yml, the Dockerfile and .env.example, checked by parsing (no Docker engine here):
every command is one the real CLI accepts, every worker has its own GPU and shard, Redis keeps
an append-only file on a volume, and every PREFIXQ_* variable is a real, valid setting."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click
import pytest

from common.config import ENV_PREFIX, Settings
from producer.cli import main

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return loaded


@pytest.fixture(scope="module")
def env_example() -> dict[str, str]:
    values = {}
    for number, line in enumerate((ROOT / ".env.example").read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        assert sep and re.fullmatch(r"[A-Z_][A-Z0-9_]*", name), f".env.example:{number}: not NAME=value"
        assert "#" not in value, f".env.example:{number}: comments go on lines of their own"
        values[name] = value
    return values


def prefixq_services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: s for name, s in compose["services"].items() if s.get("command", [None])[0] == "prefixq"}


def parse_cli(argv: list[str]) -> tuple[click.Command, click.Context]:
    """Resolve ``prefixq SUB ... --opt value`` against the real click commands and parse its
    options (unknown options, bad values or missing required ones raise); nothing runs."""
    assert argv[0] == "prefixq", argv
    command: click.Command = main
    args = argv[1:]
    while isinstance(command, click.Group):
        assert args and args[0] in command.commands, f"{argv}: no command {args[:1]}"
        command, args = command.commands[args[0]], args[1:]
    return command, command.make_context(" ".join(argv[:2]), list(args))


def test_every_command_uses_real_cli_options(compose: dict[str, Any]) -> None:
    commands = {name: s["command"] for name, s in prefixq_services(compose).items()}
    assert set(commands) == {"gpu0", "gpu1", "dashboard"}
    for name, argv in commands.items():
        assert isinstance(argv, list) and all(isinstance(a, str) for a in argv), name
        command, _ctx = parse_cli(argv)
        assert command.name in ("worker", "dashboard"), name
    assert parse_cli(commands["dashboard"])[1].params["host"] == "0.0.0.0"  # reachable in its container


def test_dockerfile_commands_use_real_cli_options() -> None:
    cmds = re.findall(r"^CMD (\[.*\])$", (ROOT / "Dockerfile").read_text(), re.MULTILINE)
    assert len(cmds) == 2
    for cmd in cmds:
        parse_cli(json.loads(cmd))


def test_each_worker_has_its_own_gpu_and_shard(compose: dict[str, Any], env_example: dict[str, str]) -> None:
    workers = {n: s for n, s in prefixq_services(compose).items() if s["command"][1] == "worker"}
    gpus, shards = [], []
    for name, service in workers.items():
        devices = service["deploy"]["resources"]["reservations"]["devices"]
        assert len(devices) == 1, name
        assert devices[0]["driver"] == "nvidia" and "gpu" in devices[0]["capabilities"], name
        assert len(devices[0]["device_ids"]) == 1, f"{name}: one GPU per worker"
        gpus.append(devices[0]["device_ids"][0])
        shards.append(parse_cli(service["command"])[1].params["shard"])
        assert service["restart"] == "unless-stopped", name
        assert service["environment"]["PREFIXQ_REDIS_URL"] == "redis://redis:6379/0", name
    assert len(set(gpus)) == len(gpus) == 2, gpus
    assert len(set(shards)) == len(shards)
    # Producers route to PREFIXQ_SHARDS: exactly the shards the workers serve.
    assert ",".join(shards) == env_example["PREFIXQ_SHARDS"]


def test_redis_keeps_an_append_only_file_on_a_volume(compose: dict[str, Any]) -> None:
    redis = compose["services"]["redis"]
    command = redis["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    volume, _, target = redis["volumes"][0].partition(":")
    assert target == "/data" and volume in compose["volumes"]
    assert redis["restart"] == "unless-stopped" and "healthcheck" in redis
    for name, service in prefixq_services(compose).items():
        assert service["depends_on"]["redis"]["condition"] == "service_healthy", name


def test_services_build_from_the_dockerfile(compose: dict[str, Any]) -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert dockerfile.count("FROM python:3.11-slim AS base") == 1
    targets = set(re.findall(r"^FROM \S+ AS (\S+)$", dockerfile, re.MULTILINE))
    assert re.search(r'pip install "\.\[gpu\]"', dockerfile)
    for name, service in prefixq_services(compose).items():
        assert service["build"]["context"] == "." and service["build"]["target"] in targets, name
        assert service["env_file"] == [{"path": ".env", "required": False}], name


def test_ports_are_published_on_loopback_only(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        for port in service.get("ports", []):
            assert port.startswith("127.0.0.1:"), f"{name}: {port}"


def test_env_example_holds_only_real_valid_settings(compose: dict[str, Any],
                                                   env_example: dict[str, str]) -> None:
    settings_env = {k: v for k, v in env_example.items() if k.startswith(ENV_PREFIX)}
    Settings.from_env(environ=settings_env)  # unknown names and bad values raise
    # Every PREFIXQ_* the compose file sets or reads is a real setting too.
    text = (ROOT / "docker-compose.yml").read_text()
    used = set(re.findall(r"\b(PREFIXQ_[A-Z0-9_]+)\b", text))
    known = {ENV_PREFIX + name.upper() for name in Settings.__dataclass_fields__}
    assert used <= known, used - known
    # Every compose-only variable the file reads is documented in .env.example.
    compose_vars = set(re.findall(r"\$\{([A-Z_]+)(?::-[^}]*)?\}", text)) - known
    assert compose_vars <= set(env_example), compose_vars - set(env_example)
