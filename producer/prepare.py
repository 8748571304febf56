"""Turning items into what the router and the queue need: text parts, token ids, block hashes.

A prompt whose last turn follows a shared head (a document question: the system turn holding
the document) is split into that head, stored once in Redis under its content address, and the
rest, which travels in the job. Each distinct head is tokenized once per submission; the block
hashes that routing uses cover the head's full blocks (or the whole prompt when nothing is shared).
The token ids travel too, so that workers need not tokenize again.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import xxhash

from common.blocks import block_hashes
from common.prompts import ChatTokenizer, split_prompt
from producer.items import Item


@dataclass(frozen=True)
class Prepared:
    """One item, rendered and hashed."""

    item: Item
    head: str  # the shared prefix text ("" when the prompt has none)
    rest: str  # the prompt after the head
    head_ids: list[int]
    rest_ids: list[int]
    hashes: list[bytes]
    splits_cleanly: bool  # head_ids + rest_ids are the whole prompt's tokens

    @property
    def prompt_tokens(self) -> int:
        return len(self.head_ids) + len(self.rest_ids)

    @functools.cached_property
    def head_id(self) -> str:
        """The head's content address ("" when there is no head)."""
        return content_id(self.head) if self.head else ""


def content_id(text: str) -> str:
    """Content address of a shared prefix: 128-bit xxhash, hex."""
    return xxhash.xxh3_128_hexdigest(text.encode("utf-8"))


def prepare(tokenizer: ChatTokenizer, items: Sequence[Item], block_size: int, seed: int) -> list[Prepared]:
    """Render, split, tokenize (each distinct head once) and hash every item."""
    parts = [split_prompt(tokenizer, item.messages) for item in items]
    heads = sorted({head for head, _ in parts if head})
    head_ids = dict(zip(heads, _encode(tokenizer, heads)))
    head_hashes = {head: block_hashes(ids, block_size, seed) for head, ids in head_ids.items()}
    rest_ids = _encode(tokenizer, [rest for _, rest in parts])
    prepared = []
    for item, (head, rest), rest_tokens in zip(items, parts, rest_ids):
        if head:  # routing looks at the shared head's full blocks only
            head_tokens, hashes = head_ids[head], head_hashes[head]
        else:
            head_tokens, hashes = [], block_hashes(rest_tokens, block_size, seed)
        prepared.append(Prepared(item, head, rest, head_tokens, rest_tokens, hashes,
                                 tokenizer.splits_cleanly(head, rest)))
    return prepared


def _encode(tokenizer: ChatTokenizer, texts: list[str]) -> list[list[int]]:
    return tokenizer.encode_batch(texts) if texts else []
