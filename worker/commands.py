"""Commands sent to a worker through Redis, on RQ's own channel for it (``rq:pubsub:<name>``).

RQ's ``send_shutdown_command(connection, worker_name)`` works as it does for stock workers: the
worker stops pulling, finishes what it holds and exits. prefixq adds ``reset-prefix-cache``
(``producer.admin.reset_prefix_caches`` sends it): the engine forgets every cached prefix, the
shard starts a new epoch so routing forgets what it held, and the worker replies on the list the
sender named. Unknown commands are logged and ignored, as RQ does.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any, Callable

from redis import Redis
from redis.exceptions import RedisError
from rq.command import PUBSUB_CHANNEL_TEMPLATE

from worker.threads import name_this_thread

log = logging.getLogger(__name__)

RESET_PREFIX_CACHE = "reset-prefix-cache"
REPLY_TTL_S = 300  # an unread reply list expires
LISTEN_S = 5.0  # the listener wakes this often to see whether it should stop


class CommandListener:
    """A thread that hands each command addressed to ``worker_name`` to ``handle`` (called in the
    thread; it must not block). Survives Redis restarts: it resubscribes when Redis is back.

    It waits for commands LISTEN_S at a time (each wake-up takes CPU from the engine), and
    :meth:`stop` does not wait for it: it is a daemon thread that only reads, and it ends at
    its next wake-up."""

    def __init__(self, connection: Redis, worker_name: str,
                 handle: Callable[[dict[str, Any]], None]) -> None:
        self.connection, self.channel, self.handle = connection, PUBSUB_CHANNEL_TEMPLATE % worker_name, handle
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="prefixq-commands", daemon=True)

    def start(self) -> CommandListener:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        name_this_thread()
        while not self._stop.is_set():
            pubsub = self.connection.pubsub(ignore_subscribe_messages=True)
            try:
                pubsub.subscribe(self.channel)
                while not self._stop.is_set():
                    message = pubsub.get_message(timeout=LISTEN_S)
                    if message is not None and message.get("type") == "message" and not self._stop.is_set():
                        self._dispatch(message["data"])
            except RedisError as e:
                log.warning("commands: lost Redis (%s); resubscribing", e)
                self._stop.wait(1.0)
            finally:
                try:
                    pubsub.close()
                except RedisError:
                    pass

    def _dispatch(self, data: bytes) -> None:
        try:
            payload = json.loads(data)
            if not isinstance(payload, dict) or not isinstance(payload.get("command"), str):
                raise ValueError("not an object with a 'command' string")
        except ValueError as e:
            log.warning("commands: ignored a malformed command on %s (%s)", self.channel, e)
            return
        try:
            self.handle(payload)
        except Exception:  # one bad command must not end the listener
            log.exception("commands: handling %r failed", payload.get("command"))


def reply(connection: Redis, reply_to: str, answer: dict[str, Any]) -> None:
    """Push ``answer`` (JSON) onto the sender's reply list, which expires if nobody reads it."""
    with connection.pipeline() as pipe:
        pipe.rpush(reply_to, json.dumps(answer))
        pipe.expire(reply_to, REPLY_TTL_S)
        pipe.execute()
