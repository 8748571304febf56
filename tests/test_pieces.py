"""Encoding prompts cut at the tokenizer's added tokens gives exactly the ids of encoding them whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from common.pieces import PieceEncoder

ADDED = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<repo_name>", "<reponame>"]
FRAGMENTS = ["system\n", "user\n", "assistant\n", "\n", " ", "  ", "\n\n", "<|im", "_end|>", "<", "|>",
             "You are a helpful AI assistant named SmolLM, trained by Hugging Face", "Paris.", "é", "🙂"]
piece = st.one_of(st.sampled_from(ADDED), st.sampled_from(FRAGMENTS), st.text(max_size=12))
texts = st.lists(st.lists(piece, max_size=12).map("".join), min_size=1, max_size=8)


def whole(tokenizer: Tokenizer, batch: list[str]) -> list[list[int]]:
    return [tokenizer.encode(text, add_special_tokens=False).ids for text in batch]


def load(folder: Path) -> tuple[Tokenizer, dict[str, Any]]:
    rules = (folder / "tokenizer.json").read_text(encoding="utf-8")
    return Tokenizer.from_str(rules), json.loads(rules)


@pytest.fixture(scope="module")
def builtin(model_path: str) -> tuple[Tokenizer, PieceEncoder]:
    tokenizer, rules = load(Path(model_path))
    return tokenizer, PieceEncoder(tokenizer, rules)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=texts)
def test_cut_encoding_is_whole_encoding(builtin: tuple[Tokenizer, PieceEncoder], batch: list[str]) -> None:
    tokenizer, encoder = builtin
    assert encoder.cuts  # the built-in tokenizer is one that may be cut
    assert encoder.encode_batch(batch) == whole(tokenizer, batch)


def test_repeated_pieces_of_one_batch_are_shared_correctly(builtin: tuple[Tokenizer, PieceEncoder]) -> None:
    tokenizer, encoder = builtin
    batch = [f"<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nQuestion {i}?<|im_end|>\n"
             "<|im_start|>assistant\n" for i in range(5)] + ["", "<|im_end|>", "plain text"]
    assert encoder.encode_batch(batch) == whole(tokenizer, batch)
    assert encoder.encode_batch([]) == []


@pytest.mark.parametrize("change", ["lstrip", "rstrip", "normalizer", "prefix space"])
def test_tokenizers_that_reach_across_added_tokens_are_encoded_whole(model_path: str, tmp_path: Path,
                                                                     change: str) -> None:
    rules = json.loads((Path(model_path) / "tokenizer.json").read_text(encoding="utf-8"))
    end = next(t for t in rules["added_tokens"] if t["content"] == "<|im_end|>")
    if change in ("lstrip", "rstrip"):
        end[change] = True
    elif change == "normalizer":
        rules["normalizer"] = {"type": "Lowercase"}
    else:
        rules["pre_tokenizer"]["add_prefix_space"] = True
    (tmp_path / "tokenizer.json").write_text(json.dumps(rules), encoding="utf-8")
    tokenizer, rules = load(tmp_path)
    encoder = PieceEncoder(tokenizer, rules)
    assert not encoder.cuts
    batch = ["Hi <|im_end|> there", "<|im_start|>User\n Q? <|im_end|>\n<|im_start|>", " x<|im_end|>  y"]
    assert encoder.encode_batch(batch) == whole(tokenizer, batch)
