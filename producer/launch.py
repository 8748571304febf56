"""Starting local processes: a private ``redis-server`` and worker processes.

Used by ``prefixq demo``, the tests and the benchmarks. In production, Redis and the workers
run on their own hosts and nothing here is needed.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO
from urllib.parse import quote

from redis import Redis

from common.errors import PrefixqError


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class TLSFiles:
    """What ``redis-server`` needs to serve TLS: its certificate and key, and the CA that signed
    them (clients verify the server against the CA; client certificates are not required)."""

    cert: Path
    key: Path
    ca: Path


class RedisServer:
    """A private ``redis-server`` on a free loopback port, with its data in a temp folder.

    By default it needs no password and speaks plain TCP. ``password`` alone sets
    ``requirepass`` (the default user's password); with ``username`` too, that ACL user gets every
    permission and the default user is disabled. ``tls`` serves TLS only, on the same port.
    :attr:`url` carries whatever a client needs (scheme, credentials, the CA file).

    ``hz`` is how often the server's timer runs (Redis's default: 10 a second). Every wake-up
    costs CPU that engines on the same cores would use: an idle server takes about 1.3 ms of
    CPU a second at 10 and 0.13 ms at 1 (benchmarks/results/notes.md, "Session 9"). Expired keys
    still vanish when read; only their background sweep, and the timeout of a blocking command
    that nothing wakes, move to the one-second tick.
    """

    def __init__(self, *, port: int | None = None, appendonly: bool = True,
                 extra_args: tuple[str, ...] = (), password: str | None = None,
                 username: str | None = None, tls: TLSFiles | None = None, hz: int = 1) -> None:
        if shutil.which("redis-server") is None:
            raise PrefixqError("redis-server is not installed (apt-get install redis-server)")
        if username is not None and not password:
            raise PrefixqError("RedisServer: an ACL user needs a password")
        self.port = port or free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="prefixq-redis-"))
        self.appendonly = appendonly
        self.extra_args = extra_args
        self.hz = hz
        self.password, self.username, self.tls = password, username, tls
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """A redis-py URL for database 0, with credentials and the CA file as needed."""
        return self.url_for(0)

    def url_for(self, db: int) -> str:
        """:attr:`url`, for database ``db``."""
        auth = ""
        if self.password:
            auth = f"{quote(self.username or '', safe='')}:{quote(self.password, safe='')}@"
        if self.tls is None:
            return f"redis://{auth}127.0.0.1:{self.port}/{db}"
        return f"rediss://{auth}127.0.0.1:{self.port}/{db}?ssl_ca_certs={quote(str(self.tls.ca), safe='/')}"

    def _security_args(self) -> list[str]:
        args: list[str] = []
        if self.username is not None:
            args += ["--user", self.username, "on", f">{self.password}", "~*", "&*", "+@all",
                     "--user", "default", "off"]
        elif self.password:
            args += ["--requirepass", self.password]
        if self.tls is None:
            args += ["--port", str(self.port)]
        else:
            args += ["--port", "0", "--tls-port", str(self.port), "--tls-cert-file", str(self.tls.cert),
                     "--tls-key-file", str(self.tls.key), "--tls-ca-cert-file", str(self.tls.ca),
                     "--tls-auth-clients", "no"]
        return args

    def start(self) -> RedisServer:
        args = ["redis-server", *self._security_args(), "--bind", "127.0.0.1", "--save", "",
                "--dir", str(self.dir), "--appendonly", "yes" if self.appendonly else "no",
                "--logfile", str(self.dir / "redis.log"), "--hz", str(self.hz), *self.extra_args]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        client = Redis.from_url(self.url, socket_connect_timeout=0.5)
        try:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break  # it refused its configuration
                try:
                    if client.ping():
                        return self
                except Exception:  # not listening yet
                    time.sleep(0.05)
        finally:
            client.close()
        raise PrefixqError(f"redis-server did not start on port {self.port}; see {self.dir}/redis.log")

    def stop(self, *, kill: bool = False) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            self.proc.wait(timeout=30)
        self.proc = None

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


class WorkerProcess:
    """One ``prefixq worker`` subprocess, its log in a file, bound to one CPU core."""

    def __init__(self, shard: str, *, redis_url: str, core: int | None, log_dir: Path,
                 extra_args: tuple[str, ...] = (), env: dict[str, str] | None = None) -> None:
        self.shard, self.redis_url, self.core = shard, redis_url, core
        self.log_path = log_dir / f"worker-{shard}.log"
        self.extra_args, self.env = extra_args, env or {}
        self.wrapper: tuple[str, ...] = ()  # a command the worker runs under (a profiler)
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def start(self) -> WorkerProcess:
        env = {**os.environ, **self.env, "PREFIXQ_REDIS_URL": self.redis_url}
        if self.core is not None:
            env["VLLM_CPU_OMP_THREADS_BIND"] = str(self.core)
        self._log = open(self.log_path, "ab")
        # A process group of its own (a crash is simulated by killing the whole group, engine
        # included; a terminal's Ctrl-C does not reach it), but the caller's session: with Linux's
        # autogroup scheduling every session is a scheduling group of its own, and the standalone
        # vLLM baseline's engines run in the caller's session too.
        self.proc = subprocess.Popen(
            [*self.wrapper, sys.executable, "-m", "producer.cli", "worker", "--shard", self.shard,
             *self.extra_args],
            env=env, stdout=self._log, stderr=subprocess.STDOUT, process_group=0)
        return self

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def wait_ready(self, timeout_s: float) -> None:
        """Wait for the worker's ``ready`` line; raise with its log tail if it dies first."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if " ready: " in self.log_text():
                return
            if self.proc is not None and self.proc.poll() is not None:
                raise PrefixqError(f"worker {self.shard} exited with {self.proc.returncode}:\n"
                                   + self.log_text()[-3000:])
            time.sleep(0.2)
        raise PrefixqError(f"worker {self.shard} not ready after {timeout_s:.0f} s:\n"
                           + self.log_text()[-3000:])

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 120) -> int | None:
        """Signal the worker (SIGTERM drains) and wait; SIGKILL its group if it hangs."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            if sig == signal.SIGKILL:  # a crash takes the engine's processes down with it
                os.killpg(self.proc.pid, signal.SIGKILL)
            else:
                self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=30)
        code = self.proc.returncode
        if self._log is not None:
            self._log.close()
        return code


def one_core_each(count: int) -> list[int]:
    """The cores ``count`` engines are bound to by default: one each, in turn over the machine's."""
    num_cores = os.cpu_count() or 1
    return [i % num_cores for i in range(count)]


def start_workers(shards: list[str], *, redis_url: str, log_dir: Path, timeout_s: float = 900,
                  extra_args: tuple[str, ...] = (), metrics_ports: list[int] | None = None,
                  cores: list[int] | None = None) -> list[WorkerProcess]:
    """Start one worker per shard, each bound to its own core where there are enough (or to
    ``cores[i]``), and wait."""
    ports = metrics_ports or []
    cores = cores or one_core_each(len(shards))
    workers = [WorkerProcess(shard, redis_url=redis_url, core=cores[i], log_dir=log_dir,
                             extra_args=(*extra_args, *(("--metrics-port", str(ports[i])) if ports else ())),
                             ).start() for i, shard in enumerate(shards)]
    try:
        for worker in workers:
            worker.wait_ready(timeout_s)
    except BaseException:
        for worker in workers:
            worker.stop(signal.SIGKILL)
        raise
    return workers
