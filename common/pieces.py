"""Encoding many prompts at once, each distinct piece of text once.

A tokenizer finds its added tokens (``<|im_start|>`` and the like) in the text before any other
rule runs, then encodes the text between them piece by piece. Where nothing reaches across those
cuts, a text's ids are its pieces' ids joined, and a chat template's fixed parts (a default system
prompt, the role names, a document shared by several questions) repeat in every prompt of a
submission: they are encoded once per call instead of once per prompt.

Nothing reaches across the cuts when no added token strips the whitespace beside it, matches only
whole words or is matched after normalization; there is no normalizer; the pre-tokenizer adds no
prefix space; and the tokenizer neither pads nor truncates. Otherwise every text is encoded whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any


class PieceEncoder:
    """``Tokenizer.encode`` without special tokens, for many texts, cut at the added tokens."""

    def __init__(self, tokenizer: Any, rules: dict[str, Any]) -> None:
        """``tokenizer`` is a ``tokenizers.Tokenizer``; ``rules``, its ``tokenizer.json``."""
        self._tokenizer = tokenizer
        added = tokenizer.get_added_tokens_decoder()
        self._known = {token.content: [token_id] for token_id, token in added.items()}
        self._known[""] = []
        self._cut = None
        is_clean = all(_cuts_cleanly(token) for token in added.values())
        if added and is_clean and _encodes_pieces_alone(tokenizer, rules):
            longest_first = sorted((token.content for token in added.values()), key=len, reverse=True)
            self._cut = re.compile("(" + "|".join(map(re.escape, longest_first)) + ")").split

    @property
    def cuts(self) -> bool:
        """Whether texts are cut at the added tokens (else each is encoded whole)."""
        return self._cut is not None

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        if self._cut is None:
            return self._encode(texts)
        pieces = [self._cut(text) for text in texts]
        ids = dict(self._known)  # per call, so that nothing grows with the texts seen
        distinct = list({piece for text_pieces in pieces for piece in text_pieces} - ids.keys())
        ids.update(zip(distinct, self._encode(distinct)))
        return [[i for piece in text_pieces for i in ids[piece]] for text_pieces in pieces]

    def _encode(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self._tokenizer.encode_batch_fast(texts, add_special_tokens=False)]


def _cuts_cleanly(token: Any) -> bool:
    return not (token.lstrip or token.rstrip or token.single_word or token.normalized)


def _encodes_pieces_alone(tokenizer: Any, rules: dict[str, Any]) -> bool:
    if rules.get("normalizer") is not None or tokenizer.padding or tokenizer.truncation:
        return False
    # A prefix space (ByteLevel's add_prefix_space, Metaspace's prepend_scheme) may go on the
    # first piece only.
    return not any(d.get("add_prefix_space") or d.get("prepend_scheme") not in (None, "never")
                   for d in _dicts(rules.get("pre_tokenizer")))


def _dicts(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _dicts(value)
    elif isinstance(node, list):
        for value in node:
            yield from _dicts(value)
