"""A vLLM plugin: a KV-cache event publisher with no thread of its own on the engine's path.

vLLM's ZMQ publisher hands each step's events to a thread that waits on its queue with a 0.1 s
timeout: it wakes ten times a second whether or not there is anything to send, and once more
for every step that has events. On a CPU engine that thread shares the engine's core with the
model, so each wake-up takes the core from the model's threads (session 17's profile: almost
all of that thread's samples were those wake-ups; benchmarks/results/notes.md).

This publisher keeps vLLM's wire format, sequence numbers, replay protocol and end-of-replay
marker (``worker/kvevents.py`` reads it as it reads vLLM's), but ``publish`` encodes the
step's batch and sends it at once on the caller's thread, the engine core's, which called it
between two steps. Only a replay request (a worker catching up or probing) wakes the replay
thread, which waits on its socket with no timeout. A busy engine is interrupted only by ZMQ's
own I/O thread writing each step's message, as with vLLM's publisher.

vLLM loads general plugins (the ``vllm.general_plugins`` entry point in ``pyproject.toml``) in
each of its processes. Its configuration accepts only its own publisher names, so
:func:`register` puts a chooser in the place of ``"zmq"``: an engine whose environment has
``PREFIXQ_KV_PUBLISHER=inline`` (the worker's setting ``kv_publisher``, which the worker passes
on to its engine) gets this publisher, any other engine vLLM's.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from typing import Any

from common.config import env_var

# Under vLLM's logger: vLLM gives it a handler in every process it starts.
log = logging.getLogger("vllm.plugins.prefixq")

# The worker's setting kv_publisher, which it passes on to its engine. "inline": this module's
# publisher; anything else: vLLM's.
ENV = env_var("kv_publisher")
INLINE = "inline"


def register() -> None:
    """vLLM's plugin hook; it may run more than once in a process."""
    from vllm.distributed.kv_events import EventPublisherFactory, ZmqEventPublisher

    # The factory has no public way to replace a name (register_publisher refuses one taken).
    registry = EventPublisherFactory._registry
    if registry.get("zmq") is ZmqEventPublisher:
        registry["zmq"] = _zmq_publisher


def _zmq_publisher(*args: Any, **kwargs: Any) -> Any:
    from vllm.distributed.kv_events import ZmqEventPublisher

    cls = publisher_class() if os.environ.get(ENV) == INLINE else ZmqEventPublisher
    return cls(*args, **kwargs)


@functools.cache
def publisher_class() -> type:
    """The publisher: vLLM's ``ZmqEventPublisher``, sending on the caller's thread."""
    import msgspec
    import zmq
    from vllm.distributed.kv_events import EventBatch, ZmqEventPublisher

    class InlineZmqEventPublisher(ZmqEventPublisher):  # type: ignore[misc]
        """vLLM's ZMQ publisher, sending each batch as it is published."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            self._pack = msgspec.msgpack.Encoder()
            self._lock = threading.Lock()  # the replay buffer: appended here, read by the thread
            # A pair of sockets: shutdown() sends on one end to end the replay thread's wait.
            ctx = zmq.Context.instance()
            address = f"inproc://prefixq-kv-wake-{id(self)}"
            self._waiting = ctx.socket(zmq.PAIR)
            self._waiting.bind(address)
            self._wake = ctx.socket(zmq.PAIR)
            self._wake.connect(address)
            super().__init__(*args, **kwargs)  # sockets, buffer, sequence; starts the thread below
            log.info("KV-cache events sent as each step ends (prefixq's publisher)")

        def publish(self, events: EventBatch) -> None:
            if not self._running:
                raise RuntimeError("Publisher is closed")
            if events.data_parallel_rank is None:
                events.data_parallel_rank = self._data_parallel_rank
            try:
                payload = self._pack.encode(events)
                with self._lock:
                    seq = next(self._seq_gen)
                    self._buffer.append((seq, payload))
                # PUB never blocks: past its high-water mark it drops, and the replay fills in.
                self._pub.send_multipart((self._topic_bytes, seq.to_bytes(8, "big"), payload))
            except Exception:  # the events are advisory: the engine goes on without them
                log.exception("KV events: could not publish a batch")

        def shutdown(self) -> None:
            if self._wake.closed:
                return
            self._running = False
            self._wake.send(b"")
            self._thread.join(timeout=self.SHUTDOWN_TIMEOUT)
            for sock in (self._wake, self._waiting, self._pub, self._replay):
                if sock is not None:
                    sock.close(linger=0)

        def _publisher_thread(self) -> None:
            """Answer replay requests; nothing else wakes this thread."""
            if self._replay is None:
                return
            poller = zmq.Poller()
            poller.register(self._replay, zmq.POLLIN)
            poller.register(self._waiting, zmq.POLLIN)
            while self._running:
                ready = dict(poller.poll())
                if self._waiting in ready:
                    return
                if self._replay in ready:
                    try:
                        self._service_replay()
                    except Exception:  # a bad request must not stop the replies
                        log.exception("KV events: replay request failed")

        def _service_replay(self) -> None:
            frame = self._replay.recv_multipart()
            if len(frame) != 3:
                log.warning("KV events: invalid replay request %r", frame)
                return
            client_id, _, start_seq_bytes = frame
            start_seq = int.from_bytes(start_seq_bytes, "big")
            with self._lock:
                batches = [(seq, buf) for seq, buf in self._buffer if seq >= start_seq]
            for seq, buf in batches:
                self._replay.send_multipart(
                    (client_id, b"", self._topic_bytes, seq.to_bytes(8, "big"), buf))
            self._replay.send_multipart((client_id, b"", b"", self.END_SEQ, b""))

    return InlineZmqEventPublisher
