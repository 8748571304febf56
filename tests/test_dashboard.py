"""`prefixq dashboard`: rq-dashboard's pages and data, served by Flask's test client against a
real redis-server, with a busy worker and a finished job made by the worker's own bookkeeping.

The HTML pages are shells that the browser fills from the JSON endpoints, so both are checked.
"""

from __future__ import annotations

import base64

import pytest
from flask.testing import FlaskClient
from redis import Redis

from common.codec import MAGIC, WireCodec
from common.config import Settings
from producer.client import Client
from producer.dashboard import create_app
from tests.test_cli import finish_jobs, submit_prompts, work_off
from worker.rqbatch import ShardQueue


@pytest.fixture
def settings(redis: Redis, scratch_url: str) -> Settings:
    return Settings.from_env(redis_url=scratch_url)


@pytest.fixture
def web(settings: Settings) -> FlaskClient:
    return create_app(settings).test_client()


@pytest.fixture
def jobs(settings: Settings, redis: Redis, model_path: str) -> dict[str, str]:
    """gpu0's worker finished p0 and is busy with p2; gpu1's worker is idle, p1 and p3 wait."""
    submit_prompts(Client(settings), 4)
    busy, started = work_off(redis, "gpu0", num_jobs=2, finish=False)
    finish_jobs(busy, started[:1])
    idle = ShardQueue(redis, "gpu1", WireCodec(), name="gpu1.test", result_ttl_s=3600, heartbeat_ttl_s=60)
    idle.announce()
    idle.beat([])
    return {"finished": "sub1-0", "started": started[1].job.id, "queued": "sub1-1"}


def test_queues_page_and_data(web: FlaskClient, jobs: dict[str, str]) -> None:
    page = web.get("/")
    assert page.status_code == 200 and b"Queues" in page.data
    queues = {q["name"]: q for q in web.get("/0/data/queues.json").get_json()["queues"]}
    assert set(queues) == {"gpu0", "gpu1"}
    assert queues["gpu0"]["finished_job_registry_count"] == 1
    assert queues["gpu0"]["started_job_registry_count"] == 1 and queues["gpu1"]["count"] == 2
    listed = web.get("/0/data/jobs/gpu1/queued/8/asc/1.json").get_json()["jobs"]
    assert [j["id"] for j in listed] == ["sub1-1", "sub1-3"]
    assert listed[0]["description"] == "p1 (gpu1)"


def test_workers_page_shows_a_busy_workers_current_job(web: FlaskClient, jobs: dict[str, str]) -> None:
    assert web.get("/0/view/workers").status_code == 200
    data = web.get("/0/data/workers.json")
    assert data.status_code == 200  # stock rq-dashboard would unpickle the current job: a 500
    workers = {w["name"]: w for w in data.get_json()["workers"]}
    assert set(workers) == {"gpu0.test", "gpu1.test"}
    assert workers["gpu0.test"]["state"] == "busy" and workers["gpu0.test"]["queues"] == ["gpu0"]
    assert workers["gpu0.test"]["current_job"]["job_id"] == jobs["started"]
    assert workers["gpu0.test"]["current_job"]["call_string"].startswith("prefixq.generate(")
    assert workers["gpu0.test"]["successful_job_count"] == 1
    assert workers["gpu1.test"]["current_job"] == "idle"


def test_job_pages_render_requests_and_results(web: FlaskClient, jobs: dict[str, str]) -> None:
    page = web.get(f"/0/view/job/{jobs['finished']}")
    assert page.status_code == 200 and jobs["finished"].encode() in page.data
    finished = web.get(f"/0/data/job/{jobs['finished']}.json").get_json()
    assert finished["status"] == "finished" and finished["origin"] == "gpu0"
    assert finished["result"]["text"] == "answer to p0" and finished["result"]["shard"] == "gpu0"
    queued = web.get(f"/0/data/job/{jobs['queued']}.json").get_json()
    assert queued["status"] == "queued" and queued["result"] is None
    assert web.get("/0/view/job/no-such-job").status_code == 404
    assert _status(web, "/static/css/main.css") == 200
    assert _status(web, "/favicon.ico") == 200


def test_requeue_keeps_prefixqs_wire_format(web: FlaskClient, redis: Redis, settings: Settings,
                                            model_path: str) -> None:
    submit_prompts(Client(settings), 1)
    rq, started = work_off(redis, "gpu0", num_jobs=1, finish=False)
    finish_jobs(rq, started, error="boom")
    reply = web.post("/job/sub1-0/requeue")
    assert reply.status_code == 200 and reply.get_json() == {"status": "OK"}
    assert redis.lrange("rq:queue:gpu0", 0, -1) == [b"sub1-0"]
    # Stock RQ's requeue would store zlib(data): prefixq's workers refuse that as foreign.
    data = redis.hget("rq:job:sub1-0", "data")
    assert data is not None and data.startswith(MAGIC)


def test_basic_auth_guards_every_page(settings: Settings) -> None:
    web = create_app(settings, username="admin", password="s3cret").test_client()
    assert web.get("/").status_code == 401
    assert web.get("/0/data/queues.json").status_code == 401
    assert web.get("/", headers=_basic("admin", "wrong")).status_code == 401
    assert web.get("/", headers=_basic("admin", "s3cret")).status_code == 200
    assert web.get("/0/data/workers.json", headers=_basic("admin", "s3cret")).status_code == 200


def test_url_prefix(settings: Settings) -> None:
    web = create_app(settings, url_prefix="rq/").test_client()
    assert web.get("/rq/").status_code == 200
    assert _status(web, "/rq/static/css/main.css") == 200
    assert web.get("/rq/0/data/queues.json").status_code == 200


def _status(web: FlaskClient, url: str) -> int:
    """GET ``url`` and close the response (a static file's handle stays open until then)."""
    with web.get(url) as response:
        return response.status_code


def _basic(username: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}
