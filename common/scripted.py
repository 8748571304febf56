"""Many Redis writes sent as one server-side call.

redis-py packs every pipelined command and parses every reply in Python, one by one; for a worker
that writes a dozen small commands per job (RQ's registries, executions, results), that was most
of its CPU time. A :class:`ScriptedPipeline` takes the same calls (RQ's own methods write into it
as into any pipeline) and sends them to a single Lua call that runs them in order: one reply to
parse, and atomic like MULTI/EXEC.

The commands travel as one msgpack-encoded argument, which Redis's built-in ``cmsgpack`` decodes.
Sent as separate arguments (a worker's batch has about 60 per job), redis-py's packing made
sending a batch cost about 22 µs of CPU per job here; as one msgpack payload, 13 µs. Numbers are
turned into text first, as redis-py does (``repr``), so that Redis receives the same bytes.

For writes only: the replies of the individual commands are not returned. The keys are not
declared to Redis, so this suits a single Redis server (as RQ does), not Redis Cluster.
"""

from __future__ import annotations

import functools
from typing import Any

import msgpack
from redis import Redis
from redis.client import Pipeline
from redis.commands.core import Script
from redis.exceptions import DataError

# ARGV[1]: the commands, msgpack-encoded, as a list of commands, each the list of its arguments.
RUN_COMMANDS_LUA = """
local commands = cmsgpack.unpack(ARGV[1])
for i = 1, #commands do
  redis.call(unpack(commands[i]))
end
return #commands
"""
CHUNK_COMMANDS = 4096  # commands per Lua call (a few ms of Redis time)
MAX_SCRIPTED_ARGS = 7000  # Lua's unpack() takes about 8,000 values; longer commands go as they are


class ScriptedPipeline(Pipeline):
    """A pipeline whose queued commands run in Redis as one Lua call (see the module's text).

    :meth:`execute` returns the number of commands run, not their replies. A command Redis
    rejects (a wrong type, say) ends the call with an error; the commands before it stay
    applied, as with MULTI/EXEC.
    """

    def __init__(self, client: Redis) -> None:
        super().__init__(client.connection_pool, client.response_callbacks, transaction=False,
                         shard_hint=None)
        self._client = client
        self._run = _run_commands(client)

    def execute(self, raise_on_error: bool = True) -> Any:
        return self.execute_after(None)

    def execute_after(self, script: Script | None, *payloads: bytes) -> int:
        """Run ``script`` (a registered Lua script taking one argument) once per payload, then
        the queued commands, atomically; returns the number of queued commands run."""
        stack, self.command_stack = self.command_stack, []
        calls = _calls(stack)
        if script is not None and len(payloads) == 1 and not calls:
            script(args=[payloads[0]], client=self._client)
        elif (script is None or not payloads) and len(calls) == 1 and calls[0][0]:
            self._run(args=[calls[0][1]], client=self._client)
        elif calls or (script is not None and payloads):
            # several calls in one transaction: still atomic, and no script runs long enough
            # for Redis to answer other clients BUSY (lua-time-limit)
            with self._client.pipeline(transaction=True) as pipe:
                for payload in payloads if script is not None else ():
                    script(args=[payload], client=pipe)
                for scripted, args in calls:
                    if scripted:
                        self._run(args=[args], client=pipe)
                    else:
                        pipe.execute_command(*args)
                pipe.execute()
        return len(stack)


    def take_packed(self) -> bytes:
        """The queued commands as one payload in the form ``RUN_COMMANDS_LUA`` takes, for a
        script of the caller's to run (or not); nothing is sent, and the pipeline is emptied."""
        stack, self.command_stack = self.command_stack, []
        calls = _calls(stack)
        if len(calls) != 1 or not calls[0][0]:
            raise DataError(f"{len(stack)} command(s) do not fit in one scripted payload")
        payload: bytes = calls[0][1]
        return payload


@functools.lru_cache(maxsize=64)
def _run_commands(client: Redis) -> Script:
    """The Lua call's script object, made once per client (not per batch)."""
    return client.register_script(RUN_COMMANDS_LUA)


def _calls(stack: list[tuple[tuple[Any, ...], dict[str, Any]]]) -> list[tuple[bool, Any]]:
    """The stack as (scripted, what to send) calls: runs of at most CHUNK_COMMANDS commands as
    one msgpack payload each; a command too long for Lua's ``unpack`` as its own arguments."""
    calls: list[tuple[bool, Any]] = []
    run: list[list[Any]] = []
    for command, _options in stack:
        if len(command) > MAX_SCRIPTED_ARGS:
            if run:
                calls.append((True, _packed(run)))
                run = []
            calls.append((False, list(command)))
            continue
        run.append([a if type(a) is str or type(a) is bytes else redis_text(a) for a in command])
        if len(run) == CHUNK_COMMANDS:
            calls.append((True, _packed(run)))
            run = []
    if run:
        calls.append((True, _packed(run)))
    return calls


def _packed(commands: list[list[Any]]) -> bytes:
    # Text and bytes both arrive in Lua as the same byte strings (msgpack's raw type).
    return msgpack.packb(commands, use_bin_type=False)


def redis_text(arg: Any) -> str | bytes:
    """One argument as redis-py would send it: text (a ``str`` subclass such as RQ's status
    enums included, by its value) and bytes as they are, numbers by ``repr``."""
    if isinstance(arg, (str, bytes)):
        return arg
    if isinstance(arg, (bytearray, memoryview)):
        return bytes(arg)
    if isinstance(arg, bool) or not isinstance(arg, (int, float)):
        raise DataError(f"Invalid input of type: {type(arg).__name__!r}. "
                        "Convert to a bytes, string, int or float first.")
    return repr(arg)
