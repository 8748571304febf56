"""Turning items into what the router and the queue need: text parts, token counts, block hashes.

A prompt whose last turn follows a shared head (a document question: the system turn holding
the document) is split into that head, stored once in Redis under its content address, and the
rest, which travels in the job. Each distinct head is tokenized once per submission; the block
hashes that routing uses cover the head's full blocks (or the whole prompt when nothing is shared).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import xxhash

from common.blocks import block_hashes
from common.prompts import ChatTokenizer, Message, render
from producer.items import Item


@dataclass(frozen=True)
class Prepared:
    """One item, rendered and hashed."""

    item: Item
    head: str  # the shared prefix text ("" when the prompt has none)
    rest: str  # the prompt after the head
    prompt_tokens: int
    hashes: list[bytes]

    @property
    def head_id(self) -> str:
        """The head's content address ("" when there is no head)."""
        return content_id(self.head) if self.head else ""


def content_id(text: str) -> str:
    """Content address of a shared prefix: 128-bit xxhash, hex."""
    return xxhash.xxh3_128_hexdigest(text.encode("utf-8"))


def split_prompt(tokenizer: ChatTokenizer, messages: list[Message]) -> tuple[str, str]:
    """``(head, rest)`` with ``head + rest`` the rendered prompt; head is every turn but the last."""
    full = render(tokenizer, messages)
    if len(messages) < 2:
        return "", full
    head = tokenizer.apply_chat_template(messages[:-1], tokenize=False, add_generation_prompt=False)
    if isinstance(head, str) and head and full.startswith(head):
        return head, full[len(head):]
    return "", full


def prepare(tokenizer: ChatTokenizer, items: Sequence[Item], block_size: int, seed: int) -> list[Prepared]:
    """Render, split, tokenize (each distinct head once) and hash every item."""
    parts = [split_prompt(tokenizer, item.messages) for item in items]
    heads = sorted({head for head, _ in parts if head})
    head_ids = dict(zip(heads, _encode(tokenizer, heads)))
    rest_ids = _encode(tokenizer, [rest for _, rest in parts])
    prepared = []
    for item, (head, rest), rest_tokens in zip(items, parts, rest_ids):
        head_tokens = head_ids.get(head, [])
        tokens = [*head_tokens, *rest_tokens]
        hashes = block_hashes(tokens, block_size, seed)
        if head:
            hashes = hashes[: len(head_tokens) // block_size]
        prepared.append(Prepared(item, head, rest, len(tokens), hashes))
    return prepared


def _encode(tokenizer: ChatTokenizer, texts: list[str]) -> list[list[int]]:
    return tokenizer.encode_batch(texts) if texts else []
