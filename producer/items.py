"""What a caller submits: one item per generation request, before rendering and routing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from common.errors import InputError
from common.prompts import Message, check_messages, document_messages, prompt_messages
from common.schema import SAMPLING_KEYS


@dataclass(frozen=True)
class Item:
    """One request: chat messages, sampling overrides and a caller tag."""

    messages: list[Message]
    tag: str = ""
    sampling: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = set(self.sampling) - SAMPLING_KEYS
        if unknown:
            raise InputError(f"sampling: unknown parameter(s) {', '.join(sorted(unknown))}")

    @classmethod
    def document_question(cls, document: str, question: str, *, tag: str = "",
                          **sampling: Any) -> Item:
        """A question about a document (its questions share the document's prefix)."""
        return cls(document_messages(document, question), tag=tag, sampling=sampling)

    @classmethod
    def prompt(cls, text: str, *, tag: str = "", **sampling: Any) -> Item:
        """A plain prompt, rendered as one user turn."""
        return cls(prompt_messages(text), tag=tag, sampling=sampling)

    @classmethod
    def chat(cls, messages: Any, *, tag: str = "", **sampling: Any) -> Item:
        """OpenAI-style chat messages; every turn before the last is the shared prefix."""
        return cls(check_messages(messages), tag=tag, sampling=sampling)
