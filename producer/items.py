"""What a caller submits: one item per generation request, before rendering and routing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from common.errors import InputError
from common.prompts import Message, check_messages, document_messages, prompt_messages
from common.schema import SAMPLING_KEYS


@dataclass(frozen=True)
class Item:
    """One request: chat messages, sampling overrides, a caller tag and the key it is routed by."""

    messages: list[Message]
    route_key: str
    tag: str = ""
    sampling: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = set(self.sampling) - SAMPLING_KEYS
        if unknown:
            raise InputError(f"sampling: unknown parameter(s) {', '.join(sorted(unknown))}")

    @classmethod
    def document_question(cls, document: str, question: str, *, tag: str = "",
                          **sampling: Any) -> Item:
        """A question about a document; routed by the document so its questions share a shard."""
        return cls(document_messages(document, question), route_key=document, tag=tag,
                   sampling=sampling)

    @classmethod
    def prompt(cls, text: str, *, tag: str = "", **sampling: Any) -> Item:
        """A plain prompt, rendered as one user turn."""
        return cls(prompt_messages(text), route_key=text, tag=tag, sampling=sampling)

    @classmethod
    def chat(cls, messages: Any, *, tag: str = "", **sampling: Any) -> Item:
        """OpenAI-style chat messages; routed by everything before the last turn."""
        checked = check_messages(messages)
        route_key = "\x1e".join(m["role"] + "\x1f" + m["content"] for m in checked[:-1]) or \
            checked[-1]["content"]
        return cls(checked, route_key=route_key, tag=tag, sampling=sampling)
