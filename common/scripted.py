"""Many Redis writes sent as one server-side call.

redis-py packs every pipelined command and parses every reply in Python, one by one; for a worker
that writes a dozen small commands per job (RQ's registries, executions, results), that was most
of its CPU time. A :class:`ScriptedPipeline` takes the same calls (RQ's own methods write into it
as into any pipeline) and sends them as the arguments of a single Lua call that runs them in
order: one command to pack, one reply to parse, and atomic like MULTI/EXEC.

For writes only: the replies of the individual commands are not returned. The keys are not
declared to Redis, so this suits a single Redis server (as RQ does), not Redis Cluster.
"""

from __future__ import annotations

import functools
from typing import Any

from redis import Redis
from redis.client import Pipeline
from redis.commands.core import Script

# ARGV holds the commands back to back: each command's argument count, then its arguments.
RUN_COMMANDS_LUA = """
local i, n = 1, #ARGV
while i <= n do
  local count = tonumber(ARGV[i])
  redis.call(unpack(ARGV, i + 1, i + count))
  i = i + count + 1
end
return n
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
        stack, self.command_stack = self.command_stack, []
        calls = _calls(stack)
        if len(calls) == 1 and calls[0][0]:
            self._run(args=calls[0][1], client=self._client)
        elif calls:  # several calls in one transaction: still atomic, and no script runs long
            # enough for Redis to answer other clients BUSY (lua-time-limit)
            with self._client.pipeline(transaction=True) as pipe:
                for scripted, args in calls:
                    if scripted:
                        self._run(args=args, client=pipe)
                    else:
                        pipe.execute_command(*args)
                pipe.execute()
        return len(stack)


@functools.lru_cache(maxsize=64)
def _run_commands(client: Redis) -> Script:
    """The Lua call's script object, made once per client (not per batch)."""
    return client.register_script(RUN_COMMANDS_LUA)


def _calls(stack: list[tuple[tuple[Any, ...], dict[str, Any]]]) -> list[tuple[bool, list[Any]]]:
    """The stack as (scripted, arguments) calls: runs of commands as Lua calls of at most
    CHUNK_COMMANDS commands; a command too long for Lua's ``unpack`` is sent as itself."""
    calls: list[tuple[bool, list[Any]]] = []
    run: list[Any] = []
    count = 0
    for command, _options in stack:
        if len(command) > MAX_SCRIPTED_ARGS:
            if run:
                calls.append((True, run))
                run, count = [], 0
            calls.append((False, list(command)))
            continue
        run.append(len(command))
        run.extend(command)
        count += 1
        if count == CHUNK_COMMANDS:
            calls.append((True, run))
            run, count = [], 0
    if run:
        calls.append((True, run))
    return calls
