"""How much a worker hands its engine: enough queued prompts to keep it busy, and no more.

vLLM schedules what it holds by its own token budget per step (``max_num_batched_tokens``), first
come first served. Handing it more than a few steps' worth of prompts at once makes it no faster,
but it takes those jobs out of Redis, where another worker that runs out of work first could
have taken them (:mod:`worker.stealing`). So while the engine reports how many requests it is
running (after every step), a worker pulls only while the prompts it has handed over and the
engine has not begun add up to less than ``lookahead_steps`` steps' worth of tokens. The
engine's schedule is the same as if it held everything: its queue never runs dry. Tokens are the
router's estimate of each prompt's uncached tokens (``Request.load_tokens``).

The jobs not begun are the newest of those handed over and not finished (first come, first
served), as many as are not running: a job on its way to the engine counts as not begun, and
one that finished in the step just reported counts until its result arrives (a moment later).
"""

from __future__ import annotations

import math
from collections import OrderedDict

EMA_WEIGHT = 0.2  # weight of the newest job in the running mean of tokens per job
PRIOR_TOKENS_PER_JOB = 256  # the mean assumed before any job was seen (a first pull then takes a
# fair share of a burst; a later one corrects for what it brought)


class Lookahead:
    """The jobs in the engine in admission order, and how many more tokens it should be given."""

    def __init__(self, target_tokens: int | None) -> None:
        """``target_tokens``: the prompt tokens to keep waiting in the engine; None: no limit."""
        self.target_tokens = target_tokens
        self._in_engine: OrderedDict[str, int] = OrderedDict()  # job id -> tokens, oldest first
        self._engine_running = 0  # requests begun and not finished, as of the engine's last step
        self._tokens_per_job: float | None = None

    def admitted(self, job_id: str, tokens: int) -> None:
        """A job was handed to the engine."""
        self._in_engine[job_id] = tokens
        self._tokens_per_job = tokens if self._tokens_per_job is None else \
            (1 - EMA_WEIGHT) * self._tokens_per_job + EMA_WEIGHT * tokens

    def left(self, job_id: str) -> None:
        """A job left the engine (finished or failed)."""
        self._in_engine.pop(job_id, None)

    def stepped(self, num_running: int) -> None:
        """The engine finished a step with ``num_running`` requests begun and not finished."""
        self._engine_running = num_running

    def num_waiting(self) -> int:
        """How many of the jobs handed to the engine it has not begun."""
        return max(0, len(self._in_engine) - self._engine_running)

    def waiting_tokens(self) -> int:
        """Tokens of the jobs the engine has not begun."""
        num_waiting = self.num_waiting()
        total = 0
        for tokens in _newest(self._in_engine, num_waiting):
            total += tokens
        return total

    def wanted_tokens(self) -> int | None:
        """How many more tokens to admit now (0 or less: none); None without a limit."""
        if self.target_tokens is None:
            return None
        return self.target_tokens - self.waiting_tokens()

    def jobs_for(self, tokens: int) -> int:
        """About how many jobs make ``tokens``, from the jobs admitted so far."""
        if tokens <= 0:
            return 1
        per_job = PRIOR_TOKENS_PER_JOB if self._tokens_per_job is None else self._tokens_per_job
        return max(1, math.ceil(tokens / max(per_job, 1.0)))


def _newest(items: OrderedDict[str, int], count: int) -> list[int]:
    values: list[int] = []
    for key in reversed(items):
        if len(values) >= count:
            break
        values.append(items[key])
    return values
