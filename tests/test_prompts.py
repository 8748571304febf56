"""Prompt rendering through the built-in model's own chat template."""

from __future__ import annotations

import pytest

from common.errors import InputError
from common.prompts import (DOCUMENT_PREAMBLE, check_messages, document_messages, load_tokenizer,
                            prompt_messages, render)


@pytest.fixture(scope="module")
def tokenizer(model_path: str) -> object:
    return load_tokenizer(model_path)


def test_document_question_messages_are_exactly_as_designed() -> None:
    assert document_messages("DOC", "Q?") == [
        {"role": "system", "content": "Answer the question using only the document below.\n\nDOC"},
        {"role": "user", "content": "Q?"},
    ]


def test_rendered_with_chat_template_and_generation_prompt(tokenizer: object) -> None:
    text = render(tokenizer, document_messages("The sky is blue.", "What colour is the sky?"))
    assert text == ("<|im_start|>system\n" + DOCUMENT_PREAMBLE + "The sky is blue.<|im_end|>\n"
                    "<|im_start|>user\nWhat colour is the sky?<|im_end|>\n<|im_start|>assistant\n")


def test_questions_about_one_document_share_the_document_prefix(tokenizer: object) -> None:
    document = "Paris is the capital of France. " * 20
    first = render(tokenizer, document_messages(document, "Capital?"))
    second = render(tokenizer, document_messages(document, "Which country?"))
    system_turn = first[: first.index("<|im_start|>user")]
    turn_ids, first_ids, second_ids = tokenizer.encode_batch([system_turn, first, second])  # type: ignore[attr-defined]
    num_shared = len(turn_ids)
    assert num_shared > 100
    assert first_ids[:num_shared] == second_ids[:num_shared] == turn_ids


def test_plain_prompt_is_one_user_turn(tokenizer: object) -> None:
    assert prompt_messages("Hi") == [{"role": "user", "content": "Hi"}]
    assert render(tokenizer, prompt_messages("Hi")).endswith("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")


@pytest.mark.parametrize("messages, field", [
    ([], "messages"),
    ("hello", "messages"),
    ([{"role": "robot", "content": "x"}], r"messages\[0\].role"),
    ([{"role": "user", "content": 3}], r"messages\[0\].content"),
    ([{"role": "user", "content": "ok"}, "no"], r"messages\[1\]"),
])
def test_bad_messages_name_the_field(messages: object, field: str) -> None:
    with pytest.raises(InputError, match=field):
        check_messages(messages)


def test_fast_tokenizer_matches_transformers(model_path: str) -> None:
    from pathlib import Path

    from common.prompts import FastChatTokenizer, HfChatTokenizer

    fast, reference = FastChatTokenizer(Path(model_path)), HfChatTokenizer(model_path)
    conversations = [
        document_messages("A document.\nWith two lines.", "What does it say?"),
        prompt_messages("Hello there"),
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
         {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "Bye"}],
    ]
    for messages in conversations:
        for generation_prompt in (True, False):
            assert fast.apply_chat_template(messages, add_generation_prompt=generation_prompt) == \
                reference.apply_chat_template(messages, tokenize=False,
                                              add_generation_prompt=generation_prompt)
        text = render(fast, messages)
        assert fast.encode_batch([text]) == reference.encode_batch([text])


def test_a_prompt_splits_cleanly_only_at_a_special_token(tokenizer: object, model_path: str) -> None:
    from pathlib import Path

    from common.prompts import FastChatTokenizer, HfChatTokenizer, split_prompt

    head, rest = split_prompt(tokenizer, document_messages("Some   text\n", "A question?"))  # type: ignore[arg-type]
    assert rest.startswith("<|im_start|>")
    for t in (FastChatTokenizer(Path(model_path)), HfChatTokenizer(model_path)):
        assert t.splits_cleanly(head, rest)
        assert t.splits_cleanly("", rest) and t.splits_cleanly(head, "")
        # Cut inside plain text, the parts may tokenize otherwise than the whole: never clean.
        assert not t.splits_cleanly("Hello wor", "ld")
        whole, parts = t.encode_batch(["Hello world"])[0], t.encode_batch(["Hello wor", "ld"])
        assert whole != parts[0] + parts[1]  # why: the cut changes the tokens
        assert t.fingerprint


def test_fingerprints_tell_tokenizers_apart(model_path: str, tmp_path: object) -> None:
    import json
    import shutil
    from pathlib import Path

    from common.prompts import FastChatTokenizer

    other = Path(str(tmp_path)) / "other"
    shutil.copytree(model_path, other, ignore=shutil.ignore_patterns("*.safetensors"))
    assert FastChatTokenizer(other).fingerprint == FastChatTokenizer(Path(model_path)).fingerprint
    rules = json.loads((other / "tokenizer.json").read_text(encoding="utf-8"))
    rules["normalizer"] = {"type": "Lowercase"}
    (other / "tokenizer.json").write_text(json.dumps(rules), encoding="utf-8")
    assert FastChatTokenizer(other).fingerprint != FastChatTokenizer(Path(model_path)).fingerprint
