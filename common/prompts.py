"""Prompt rendering with the model's own chat template.

A document question is always rendered from exactly these messages, so that every question about
one document shares the longest possible token prefix (the system turn holding the document):

- system: ``"Answer the question using only the document below.\\n\\n" + document``
- user: ``question``

Plain prompts become one user turn; OpenAI-style ``messages`` are rendered as given.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import xxhash
from jinja2.sandbox import ImmutableSandboxedEnvironment

from common.errors import InputError, ModelError
from common.pieces import PieceEncoder

DOCUMENT_PREAMBLE = "Answer the question using only the document below.\n\n"
ROLES = frozenset({"system", "user", "assistant"})

Message = dict[str, str]


class ChatTokenizer(Protocol):
    """What rendering, routing and shipping token ids need of a model's tokenizer."""

    def apply_chat_template(self, conversation: Any, **kwargs: Any) -> Any: ...

    def encode_batch(self, texts: list[str]) -> list[list[int]]: ...

    @property
    def fingerprint(self) -> str:
        """Names the tokenizer's exact rules: equal fingerprints tokenize alike ("" if unknown)."""
        ...

    def splits_cleanly(self, head: str, rest: str) -> bool:
        """Whether ``encode(head) + encode(rest)`` is ``encode(head + rest)``, known without
        encoding: the two meet at a special token that takes no neighbouring whitespace."""
        ...


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


def split_prompt(tokenizer: ChatTokenizer, messages: list[Message]) -> tuple[str, str]:
    """``(head, rest)`` with ``head + rest`` the rendered prompt; head is every turn but the last."""
    full = render(tokenizer, messages)
    if len(messages) < 2:
        return "", full
    head = tokenizer.apply_chat_template(messages[:-1], tokenize=False, add_generation_prompt=False)
    if isinstance(head, str) and head and full.startswith(head):
        return head, full[len(head):]
    return "", full


def render(tokenizer: ChatTokenizer, messages: list[Message]) -> str:
    """Render ``messages`` with the tokenizer's chat template, ready for the assistant's turn."""
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    if not isinstance(text, str):
        raise ModelError("the tokenizer's chat template did not render to text")
    return text


@functools.lru_cache(maxsize=4)
def load_tokenizer(model_path: str) -> ChatTokenizer:
    """Load (once per process) the tokenizer and chat template that vLLM uses for ``model_path``.

    A local folder with ``tokenizer.json`` is read with the ``tokenizers`` library and ``jinja2``
    alone (fast; no torch). Anything else goes through ``transformers.AutoTokenizer``.
    """
    folder = Path(model_path)
    if (folder / "tokenizer.json").is_file():
        return FastChatTokenizer(folder)
    return HfChatTokenizer(model_path)


class FastChatTokenizer:
    """``tokenizer.json`` plus the chat template, rendered the way transformers renders it."""

    def __init__(self, folder: Path) -> None:
        from tokenizers import Tokenizer

        try:
            rules = (folder / "tokenizer.json").read_bytes()
            self._tokenizer = Tokenizer.from_str(rules.decode("utf-8"))
            self._pieces = PieceEncoder(self._tokenizer, json.loads(rules))
            config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError, Exception) as e:
            raise ModelError(f"cannot load the tokenizer in {folder}: {e}") from e
        self.fingerprint = "json:" + xxhash.xxh3_64_hexdigest(rules)
        self._boundaries = _Boundaries(self._tokenizer.get_added_tokens_decoder().values())
        template = _chat_template(folder, config)
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                            extensions=["jinja2.ext.loopcontrols"])
        env.globals["raise_exception"] = _raise_template_error
        self._template = env.from_string(template)
        self._specials = {name: _token_text(config.get(name)) for name in
                          ("bos_token", "eos_token", "unk_token", "pad_token")}

    def apply_chat_template(self, conversation: Any, *, tokenize: bool = False,
                            add_generation_prompt: bool = False, **kwargs: Any) -> str:
        if tokenize:
            raise ModelError("FastChatTokenizer renders text only; use encode_batch for ids")
        return self._template.render(messages=conversation, add_generation_prompt=add_generation_prompt,
                                     **self._specials, **kwargs)

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        return self._pieces.encode_batch(texts)

    def splits_cleanly(self, head: str, rest: str) -> bool:
        return self._boundaries.clean(head, rest)


class HfChatTokenizer:
    """A ``transformers`` tokenizer (for hub names and folders without ``tokenizer.json``)."""

    def __init__(self, model_path: str) -> None:
        from transformers import AutoTokenizer  # heavy import: only when needed

        try:
            self._tokenizer = AutoTokenizer.from_pretrained(model_path)
        except (OSError, ValueError) as e:
            raise ModelError(f"cannot load the tokenizer of {model_path!r}: {e}") from e
        if not getattr(self._tokenizer, "chat_template", None):
            raise ModelError(f"the tokenizer of {model_path!r} has no chat template")
        self._boundaries = _Boundaries(getattr(self._tokenizer, "added_tokens_decoder", {}).values())

    @functools.cached_property
    def fingerprint(self) -> str:
        backend = getattr(self._tokenizer, "backend_tokenizer", None)  # only fast tokenizers have one
        return "" if backend is None else "hf:" + xxhash.xxh3_64_hexdigest(backend.to_str().encode())

    def splits_cleanly(self, head: str, rest: str) -> bool:
        return self._boundaries.clean(head, rest)

    def apply_chat_template(self, conversation: Any, **kwargs: Any) -> Any:
        return self._tokenizer.apply_chat_template(conversation, **kwargs)

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        return list(self._tokenizer(texts, add_special_tokens=False)["input_ids"])


class _Boundaries:
    """Where a prompt may be cut and tokenized in two parts without changing its tokens.

    Special tokens are matched in the text before any other rule runs, so nothing merges across
    one, unless it strips the whitespace beside it (``lstrip``/``rstrip``).
    """

    def __init__(self, added: Any) -> None:
        special = [t for t in added if getattr(t, "special", False)]
        self._opening = tuple(t.content for t in special if not t.lstrip)
        self._closing = tuple(t.content for t in special if not t.rstrip)

    def clean(self, head: str, rest: str) -> bool:
        return not head or not rest or rest.startswith(self._opening) or head.endswith(self._closing)


def _chat_template(folder: Path, config: dict[str, Any]) -> str:
    jinja_file = folder / "chat_template.jinja"
    if jinja_file.is_file():
        return jinja_file.read_text(encoding="utf-8")
    template = config.get("chat_template")
    if isinstance(template, list):  # named templates: take the default one
        template = next((t.get("template") for t in template if t.get("name") == "default"), None)
    if not isinstance(template, str) or not template:
        raise ModelError(f"the tokenizer in {folder} has no chat template")
    return template


def _token_text(token: Any) -> str | None:
    if isinstance(token, dict):
        return str(token.get("content", "")) or None
    return token if isinstance(token, str) else None


def _raise_template_error(message: str) -> None:
    raise InputError(f"chat template: {message}")
