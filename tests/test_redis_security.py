"""Redis URLs with a password, an ACL user and TLS, against real redis-server processes.

No vLLM here. Each test starts its own ``redis-server`` configured one of three ways:

- ``requirepass``: the default user has a password (``redis://:pw@host:port/0``);
- ``acl-user``: an ACL user ``prefixq`` with every permission, the default user disabled
  (``redis://prefixq:secret@host:port/0``);
- ``tls``: TLS only, with a throwaway CA and server certificate made by ``openssl``, plus the ACL
  user (``rediss://prefixq:secret@host:port/0?ssl_ca_certs=<ca.pem>``); skipped, with the reason,
  if the installed redis-server was built without TLS or openssl is missing.

Jobs are submitted by the real Client. The worker side is exercised two ways: its Redis
bookkeeping done directly with the worker's own ShardQueue (pull, start, store a HAND-MADE
completion: bookkeeping without an engine), and a real ``prefixq worker`` process running the
SIMULATOR engine (``--engine sim``; no model runs, its answers are "(simulated)").
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from redis import Redis
from redis.exceptions import AuthenticationError
from redis.exceptions import ConnectionError as RedisConnectionError

from common import keys
from common.codec import WireCodec
from common.config import Settings
from common.errors import PrefixqError
from common.schema import Completion
from producer.cli import main
from producer.client import Client
from producer.dashboard import create_app
from producer.items import Item
from producer.launch import RedisServer, TLSFiles, WorkerProcess, free_port
from worker.recovery import Reaper
from worker.rqbatch import Outcome, ShardQueue

SHARDS = ("gpu0", "gpu1")
PASSWORD = "s3cret/with:odd@chars"  # quoted in URLs: the URL form must survive such passwords
MODES = ("requirepass", "acl-user", "tls")


# -- servers ----------------------------------------------------------------------------------


def make_certs(folder: Path) -> TLSFiles:
    """A throwaway CA and a server certificate for 127.0.0.1 and localhost, signed by it."""
    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=prefixq test CA",
            "-keyout", "ca.key", "-out", "ca.pem")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", "server.key",
            "-out", "server.csr")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "2", "-copy_extensions", "copy", "-out", "server.pem")
    return TLSFiles(cert=folder / "server.pem", key=folder / "server.key", ca=folder / "ca.pem")


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> TLSFiles:
    if shutil.which("openssl") is None:
        pytest.skip("TLS: openssl is not installed, no certificate can be made")
    return make_certs(tmp_path_factory.mktemp("tls"))


@dataclass
class Secured:
    """A running redis-server that needs credentials, and how to reach it."""

    mode: str
    server: RedisServer

    @property
    def url(self) -> str:
        return self.server.url

    def url_with_password(self, password: str) -> str:
        return self.url.replace(quote(PASSWORD, safe=""), quote(password, safe=""))

    def url_without_credentials(self) -> str:
        return self.url.replace(f"{quote(self.server.username or '', safe='')}:{quote(PASSWORD, safe='')}@", "")

    def connect(self, url: str | None = None) -> Redis:
        return Redis.from_url(url or self.url, socket_timeout=10)


def start_secured(mode: str, certs: TLSFiles | None) -> RedisServer:
    server = RedisServer(appendonly=False, password=PASSWORD,
                         username=None if mode == "requirepass" else "prefixq",
                         tls=certs if mode == "tls" else None)
    try:
        return server.start()
    except PrefixqError:
        log = (server.dir / "redis.log").read_text(errors="replace")
        server.cleanup()
        if mode == "tls" and ("Bad directive" in log or "TLS" in log and "not" in log):
            pytest.skip(f"TLS: this redis-server was built without TLS support ({log.strip()[-200:]})")
        raise


@pytest.fixture(params=MODES)
def secured(request: pytest.FixtureRequest) -> Iterator[Secured]:
    certs = request.getfixturevalue("certs") if request.param == "tls" else None
    server = start_secured(request.param, certs)
    try:
        yield Secured(request.param, server)
    finally:
        server.cleanup()


# -- helpers ----------------------------------------------------------------------------------


def client_for(url: str) -> Client:
    """A Client configured as a user would: only the URL (in the PREFIXQ_REDIS_URL form)."""
    return Client(Settings.from_env({}, redis_url=url, shards=SHARDS, max_tokens=8))


def submit(client: Client, n: int, submission_id: str = "sec") -> list[str]:
    items = [Item.prompt(f"Say the number {i}.", tag=f"p{i}") for i in range(n)]
    return client.submit_many(items, submission_id=submission_id, policy="round-robin").job_ids


def work_off_without_engine(redis: Redis, shard: str) -> int:
    """A worker's Redis bookkeeping WITHOUT AN ENGINE: register, pull, start, and store a
    hand-made completion for every job of ``shard``'s queue. Returns how many it finished."""
    rq = ShardQueue(redis, shard, WireCodec(), name=f"{shard}.bookkeeping", result_ttl_s=3600,
                    heartbeat_ttl_s=60)
    rq.announce()
    started = rq.start(rq.pull(64, 0))
    assert all(s.error is None for s in started), [s.error for s in started]
    rq.beat(started)
    rq.finish([Outcome(s, completion=Completion(
        text=f"made-up answer to {s.request.tag if s.request else '?'}", finish_reason="stop",
        prompt_tokens=10, cached_tokens=0, completion_tokens=3, shard=shard, worker=rq.name))
        for s in started])
    rq.retire()
    return len(started)


# -- the three ways in ------------------------------------------------------------------------


def test_client_and_worker_bookkeeping_with_credentials(secured: Secured, model_path: str) -> None:
    redis = secured.connect()
    if secured.mode != "requirepass":
        assert redis.acl_whoami() == "prefixq"
    client = client_for(secured.url)
    job_ids = submit(client, 4)
    assert redis.llen("rq:queue:gpu0") == 2 and redis.llen("rq:queue:gpu1") == 2

    assert work_off_without_engine(redis, "gpu0") == 2
    assert work_off_without_engine(redis, "gpu1") == 2
    Reaper(redis, WireCodec(), SHARDS, name="reaper.test", max_attempts=3, result_ttl_s=3600,
           down_grace_s=120).reap()  # the reaper's reads and writes work through the same URL

    results = client.submission("sec").wait(timeout=10)
    assert [r.completion.text for r in results if r.completion] == [
        f"made-up answer to p{i}" for i in range(4)]
    for job_id in job_ids:
        assert redis.xlen(f"rq:results:{job_id}") == 1 and redis.exists(keys.claim_key(job_id))

    # The operator commands and the dashboard take the same URL.
    app = create_app(Settings.from_env({}, redis_url=secured.url, shards=SHARDS))
    for page in ("/0/data/workers.json", "/0/data/queues.json"):
        assert app.test_client().get(page).status_code == 200, page
    status = CliRunner().invoke(main, ["status", "sec", "--redis-url", secured.url])
    assert status.exit_code == 0, status.output
    assert "4/4 done" in status.stdout
    cleaned = CliRunner().invoke(main, ["cleanup", "--older-than", "0", "--redis-url", secured.url])
    assert cleaned.exit_code == 0, cleaned.output
    assert cleaned.stdout.startswith("deleted 1 of 1 submission(s): 4 job(s)")


def test_a_real_worker_process_with_credentials(secured: Secured, model_path: str, tmp_path: Path) -> None:
    """A real ``prefixq worker`` process (SIMULATOR engine, burst mode) through the secured URL."""
    client = client_for(secured.url)
    submit(client, 3)
    worker = WorkerProcess("gpu0", redis_url=secured.url, core=None, log_dir=tmp_path,
                           extra_args=("--engine", "sim", "--burst"),
                           env={"PREFIXQ_SHARDS": ",".join(SHARDS)}).start()
    assert worker.proc is not None
    try:
        assert worker.proc.wait(timeout=120) == 0, worker.log_text()
    finally:
        worker.stop()
    results = client.submission("sec").results()
    by_tag = {r.tag: r for r in results if r is not None}
    assert set(by_tag) == {"p0", "p2"}  # gpu0's jobs; gpu1 has no worker
    assert all(r.completion and r.completion.text == "(simulated)" for r in by_tag.values())


def test_a_wrong_password_is_a_clear_error(secured: Secured, model_path: str, tmp_path: Path) -> None:
    wrong = secured.url_with_password("not-the-password")
    with pytest.raises(AuthenticationError, match="invalid username-password pair"):
        submit(client_for(wrong), 1)
    assert secured.connect().dbsize() == 0  # nothing was written

    result = CliRunner().invoke(main, ["status", "--redis-url", wrong])
    assert result.exit_code == 1
    assert result.stderr == "prefixq: error: Redis: invalid username-password pair or user is disabled.\n"

    # No credentials at all: refused too (Redis's message names authentication).
    with pytest.raises(AuthenticationError, match="authenticated|NOAUTH|Authentication"):
        secured.connect(secured.url_without_credentials()).ping()

    # A worker with the wrong password exits 1 at once with the same one line.
    proc = subprocess.run([sys.executable, "-m", "producer.cli", "worker", "--shard", "gpu0",
                           "--engine", "sim", "--redis-url", wrong],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1] == \
        "prefixq: error: Redis: invalid username-password pair or user is disabled."


def test_tls_refuses_plain_connections_and_unknown_servers(certs: TLSFiles) -> None:
    server = start_secured("tls", certs)
    try:
        good = Secured("tls", server)
        assert good.connect().ping()
        plain = server.url.replace("rediss://", "redis://").split("?")[0]
        with pytest.raises(RedisConnectionError):
            Redis.from_url(plain, socket_timeout=5).ping()
        unverified = server.url.split("?")[0]  # rediss:// without our CA: the system CAs do not know it
        with pytest.raises(RedisConnectionError, match="certificate verify failed"):
            Redis.from_url(unverified, socket_timeout=5).ping()
        result = CliRunner().invoke(main, ["status", "--redis-url", unverified])
        assert result.exit_code == 1 and "certificate verify failed" in result.stderr
        assert result.stderr.count("\n") == 1
    finally:
        server.cleanup()


def test_the_default_server_needs_no_credentials() -> None:
    """RedisServer's defaults are unchanged: plain TCP, no password."""
    with RedisServer(appendonly=False) as server:
        assert server.url == f"redis://127.0.0.1:{server.port}/0"
        assert Redis.from_url(server.url).ping()


def test_the_private_server_ticks_once_a_second_and_still_expires_keys() -> None:
    """hz 1 (fewer wake-ups beside the engines): a key past its TTL is gone when read."""
    with RedisServer(appendonly=False) as server:
        client = Redis.from_url(server.url)
        assert client.config_get("hz") == {"hz": "1"}
        client.set("k", "v", px=50)
        time.sleep(0.2)
        assert client.get("k") is None and client.exists("k") == 0
    with RedisServer(appendonly=False, hz=10) as server:
        assert Redis.from_url(server.url).config_get("hz") == {"hz": "10"}


# -- found while testing: a gap in files this suite does not own ----------------------------


def test_a_worker_started_while_redis_is_down_waits_for_it(tmp_path: Path) -> None:
    """Redis restarting while a worker (re)starts: the worker should back off and carry on, as
    it does for every later Redis call, not exit (under a supervisor, a vLLM worker would then
    reload its engine over and over while Redis is down). SIMULATOR engine: no model runs."""
    port = free_port()
    worker = WorkerProcess("gpu0", redis_url=f"redis://127.0.0.1:{port}/0", core=None, log_dir=tmp_path,
                           extra_args=("--engine", "sim")).start()
    try:
        time.sleep(3.0)  # the simulator is up in about a second: it has met the closed port
        with RedisServer(port=port, appendonly=False):
            worker.wait_ready(30)
    finally:
        worker.stop(signal.SIGKILL, timeout_s=10)
