"""``prefixq dashboard``: the ``rq-dashboard`` package, served with prefixq's serializer.

rq-dashboard (0.9) is a Flask blueprint. This module builds the Flask app around it the way its
own CLI does, with three differences:

- The serializer. rq-dashboard reads it from one process-wide hook,
  ``rq_dashboard.web.config.serializer``; it is set to prefixq's codec, so job pages decode
  prefixq's msgpack jobs and results (never pickle).
- The workers view. rq-dashboard calls ``Worker.all`` without a serializer, so a busy worker's
  current job would be unpickled (a 500); this app's own view passes the codec and job class.
- Requeue. rq-dashboard requeues through stock ``Job``, which would compress the job data again
  and leave it unreadable to prefixq's workers; this app requeues through ``PrefixqJob``.

Basic auth, when asked for, guards the whole app (compared in constant time); it is bound to
127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import hmac
from pathlib import Path
from typing import Any

import rq_dashboard
from flask import Flask, Response, current_app, jsonify, request
from rq.exceptions import NoSuchJobError
from rq.registry import FailedJobRegistry
from rq.worker import BaseWorker, Worker
from rq_dashboard import web as rq_web

from common.codec import WireCodec
from common.config import Settings
from common.errors import ConfigError
from common.rqjob import PrefixqJob
from common.codec import SERIALIZER_PATH

_NO_STORE = {"Cache-Control": "no-store"}


def create_app(settings: Settings, *, username: str | None = None, password: str | None = None,
               url_prefix: str = "") -> Flask:
    """The dashboard as a Flask app for ``settings.redis_url`` (serve it with any WSGI server)."""
    if bool(username) != bool(password):
        raise ConfigError("dashboard: give both a username and a password for basic auth, or neither")
    prefix = _normalize_prefix(url_prefix)
    rq_web.config.serializer = WireCodec(settings.max_decoded_bytes)
    static = Path(rq_dashboard.__file__).resolve().parent / "static"
    # base.html links the favicon through the app's own static endpoint: keep one, same files.
    app = Flask(__name__, static_folder=str(static), static_url_path=f"{prefix}/static")
    app.config.from_object(rq_dashboard.default_settings)
    app.config["RQ_DASHBOARD_REDIS_URL"] = settings.redis_url
    app.register_blueprint(rq_web.blueprint, url_prefix=prefix)
    app.view_functions["rq_dashboard.list_workers"] = _list_workers
    app.view_functions["rq_dashboard.requeue_job_view"] = _requeue_job
    app.view_functions["rq_dashboard.requeue_all"] = _requeue_all
    app.register_error_handler(NoSuchJobError, _no_such_job)
    if username and password:
        app.before_request(_basic_auth(username, password))
    rq_web.setup_rq_connection(app)
    return app


def serve(app: Flask, host: str, port: int) -> None:
    """Serve ``app`` with Werkzeug's threaded server until interrupted."""
    from werkzeug.serving import run_simple

    run_simple(host, port, app, threaded=True)


def _list_workers(instance_number: int) -> tuple[Response, dict[str, str]]:
    """rq-dashboard's ``workers.json``, with workers (and their current jobs) read by the codec."""
    workers = Worker.all(connection=current_app.redis_conn, job_class=PrefixqJob,  # type: ignore[attr-defined]
                         serializer=SERIALIZER_PATH)
    for worker in workers:
        worker.serializer = rq_web.config.serializer  # the configured bound on decoded size
    rows = sorted((_worker_row(w) for w in workers), key=lambda w: (w["state"], w["queues"], w["name"]))
    return jsonify(workers=rows), _NO_STORE


def _worker_row(worker: BaseWorker) -> dict[str, Any]:
    return {
        "name": worker.name,
        "pid": worker.pid,
        "queues": worker.queue_names(),
        "state": str(worker.get_state()),
        "current_job": rq_web.serialize_current_job(worker.get_current_job()),
        "last_heartbeat": worker.last_heartbeat,
        "birth_date": worker.birth_date,
        "successful_job_count": worker.successful_job_count,
        "failed_job_count": worker.failed_job_count,
        "total_working_time": worker.total_working_time,
        "version": getattr(worker, "version", ""),
        "python_version": getattr(worker, "python_version", ""),
    }


def _requeue_job(job_id: str) -> tuple[Response, dict[str, str]]:
    PrefixqJob.fetch(job_id, connection=current_app.redis_conn,  # type: ignore[attr-defined]
                     serializer=rq_web.config.serializer).requeue()
    return jsonify(status="OK"), _NO_STORE


def _requeue_all(queue_name: str) -> tuple[Response, dict[str, str]]:
    connection = current_app.redis_conn  # type: ignore[attr-defined]
    registry = FailedJobRegistry(queue_name, connection=connection, job_class=PrefixqJob,
                                 serializer=rq_web.config.serializer)
    job_ids = registry.get_job_ids(cleanup=False)
    for job_id in job_ids:
        PrefixqJob.fetch(job_id, connection=connection, serializer=rq_web.config.serializer).requeue()
    return jsonify(status="OK", count=len(job_ids)), _NO_STORE


def _no_such_job(error: Exception) -> tuple[str, int]:
    return f"no such job ({error}); it may have expired", 404


def _basic_auth(username: str, password: str) -> Any:
    expected = (username.encode(), password.encode())

    def check() -> Response | None:
        auth = request.authorization
        given = (auth.username or "", auth.password or "") if auth else ("", "")
        # Both compared, always, so timing does not tell which one was wrong.
        ok_user = hmac.compare_digest(given[0].encode(), expected[0])
        ok_password = hmac.compare_digest(given[1].encode(), expected[1])
        if auth is not None and ok_user and ok_password:
            return None
        return Response("prefixq dashboard: log in\n", 401,
                        {"WWW-Authenticate": 'Basic realm="prefixq dashboard"'})

    return check


def _normalize_prefix(raw: str) -> str:
    prefix = raw.strip().rstrip("/")
    return f"/{prefix.lstrip('/')}" if prefix else ""
