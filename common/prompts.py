"""Prompt rendering with the model's own chat template.

A document question is always rendered from exactly these messages, so that every question about
one document shares the longest possible token prefix (the system turn holding the document):

- system: ``"Answer the question using only the document below.\\n\\n" + document``
- user: ``question``

Plain prompts become one user turn; OpenAI-style ``messages`` are rendered as given.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Protocol

from common.errors import InputError, ModelError

DOCUMENT_PREAMBLE = "Answer the question using only the document below.\n\n"
ROLES = frozenset({"system", "user", "assistant"})

Message = dict[str, str]


class ChatTokenizer(Protocol):
    """The part of a Hugging Face tokenizer that rendering needs."""

    def apply_chat_template(self, conversation: Any, **kwargs: Any) -> Any: ...


def document_messages(document: str, question: str) -> list[Message]:
    """The messages of one document question (see the module docstring)."""
    return [
        {"role": "system", "content": DOCUMENT_PREAMBLE + document},
        {"role": "user", "content": question},
    ]


def prompt_messages(prompt: str) -> list[Message]:
    """A plain prompt as one user turn."""
    return [{"role": "user", "content": prompt}]


def check_messages(messages: Any) -> list[Message]:
    """Validate OpenAI-style chat messages; raise :class:`InputError` naming the bad field."""
    if not isinstance(messages, Sequence) or isinstance(messages, str) or not messages:
        raise InputError("messages: must be a non-empty list")
    checked: list[Message] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise InputError(f"messages[{i}]: must be an object")
        role, content = message.get("role"), message.get("content")
        if role not in ROLES:
            raise InputError(f"messages[{i}].role: must be one of {', '.join(sorted(ROLES))}")
        if not isinstance(content, str):
            raise InputError(f"messages[{i}].content: must be a string")
        checked.append({"role": role, "content": content})
    return checked


def render(tokenizer: ChatTokenizer, messages: list[Message]) -> str:
    """Render ``messages`` with the tokenizer's chat template, ready for the assistant's turn."""
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    if not isinstance(text, str):
        raise ModelError("the tokenizer's chat template did not render to text")
    return text


@functools.lru_cache(maxsize=4)
def load_tokenizer(model_path: str) -> Any:
    """Load (once per process) the Hugging Face tokenizer that vLLM will load for ``model_path``."""
    from transformers import AutoTokenizer  # heavy import: only when a prompt is rendered

    try:
        tokenizer = AutoTokenizer.from_pretrained(model_path)
    except (OSError, ValueError) as e:
        raise ModelError(f"cannot load the tokenizer of {model_path!r}: {e}") from e
    if not getattr(tokenizer, "chat_template", None):
        raise ModelError(f"the tokenizer of {model_path!r} has no chat template")
    return tokenizer
