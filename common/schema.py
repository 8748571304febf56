"""What travels through the queue: the request a job carries and the completion it returns.

Both are frozen dataclasses with ``to_wire``/``from_wire`` (plain msgpack-able dicts with short
keys); the codec turns those into bytes. A malformed dict raises :class:`DecodeError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from common.errors import DecodeError

# Sampling parameters a request may carry; they map one to one onto vLLM's SamplingParams.
SAMPLING_KEYS = frozenset({
    "max_tokens", "temperature", "top_p", "top_k", "min_p", "seed", "stop",
    "presence_penalty", "frequency_penalty", "repetition_penalty", "ignore_eos", "n",
})


@dataclass(frozen=True)
class Request:
    """One generation request: a rendered prompt and its sampling parameters."""

    prompt: str  # the rendered prompt, or its part after the shared prefix when prefix_id is set
    sampling: dict[str, Any]
    submission_id: str
    index: int
    tag: str = ""  # the caller's id for this request, e.g. "<document id>/<question index>"
    prefix_id: str = ""  # content address of a shared prefix (a document) stored once in Redis
    load_tokens: int = 0  # uncached prompt tokens the router added to the shard's load
    token_ids: bytes = b""  # ``prompt`` tokenized by the producer (common.tokens), if it ships ids
    tokenizer: str = ""  # the fingerprint of the tokenizer that made ``token_ids``

    def to_wire(self) -> dict[str, Any]:
        wire = {"p": self.prompt, "s": self.sampling, "sub": self.submission_id, "i": self.index}
        if self.tag:
            wire["t"] = self.tag
        if self.prefix_id:
            wire["pre"] = self.prefix_id
        if self.load_tokens:
            wire["lt"] = self.load_tokens
        if self.tokenizer:
            wire["k"], wire["tk"] = self.token_ids, self.tokenizer
        return wire

    @classmethod
    def from_wire(cls, obj: Any) -> Request:
        try:
            req = cls(prompt=obj["p"], sampling=obj["s"], submission_id=obj["sub"], index=obj["i"],
                      tag=obj.get("t", ""), prefix_id=obj.get("pre", ""),
                      load_tokens=obj.get("lt", 0), token_ids=obj.get("k", b""),
                      tokenizer=obj.get("tk", ""))
        except (KeyError, TypeError, AttributeError) as e:
            raise DecodeError(f"malformed request payload: {e!r}") from e
        if not isinstance(req.prompt, str) or not isinstance(req.sampling, dict) or \
                not isinstance(req.prefix_id, str) or not isinstance(req.load_tokens, int) or \
                not isinstance(req.token_ids, bytes) or not isinstance(req.tokenizer, str):
            raise DecodeError("malformed request payload: a field has the wrong type")
        unknown = set(req.sampling) - SAMPLING_KEYS
        if unknown:
            raise DecodeError(f"unknown sampling parameters: {', '.join(sorted(unknown))}")
        return req


@dataclass(frozen=True)
class SharedPrefix:
    """A shared prompt head (a document's system turn), stored once in Redis under its content
    address: its text and, when the producer ships them, its token ids."""

    text: str
    token_ids: bytes = b""  # common.tokens packing
    tokenizer: str = ""  # fingerprint of the tokenizer that made ``token_ids``

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"text": self.text}
        if self.tokenizer:
            wire["k"], wire["tk"] = self.token_ids, self.tokenizer
        return wire

    @classmethod
    def from_wire(cls, obj: Any) -> SharedPrefix:
        try:
            prefix = cls(text=obj["text"], token_ids=obj.get("k", b""), tokenizer=obj.get("tk", ""))
        except (KeyError, TypeError, AttributeError) as e:
            raise DecodeError(f"malformed shared prefix: {e!r}") from e
        if not isinstance(prefix.text, str) or not isinstance(prefix.token_ids, bytes) or \
                not isinstance(prefix.tokenizer, str):
            raise DecodeError("malformed shared prefix: a field has the wrong type")
        return prefix


@dataclass(frozen=True)
class Completion:
    """The result of one request, as the worker stores it in RQ's result storage."""

    text: str
    finish_reason: str
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    shard: str
    worker: str
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def usage(self) -> dict[str, Any]:
        """Token counts in OpenAI's ``usage`` shape."""
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached_tokens},
        }

    def to_wire(self) -> dict[str, Any]:
        return {"text": self.text, "finish_reason": self.finish_reason,
                "prompt_tokens": self.prompt_tokens, "cached_tokens": self.cached_tokens,
                "completion_tokens": self.completion_tokens, "shard": self.shard,
                "worker": self.worker, "timings_ms": self.timings_ms}

    @classmethod
    def from_wire(cls, obj: Any) -> Completion:
        try:
            return cls(**obj)
        except TypeError as e:
            raise DecodeError(f"malformed completion payload: {e}") from e
