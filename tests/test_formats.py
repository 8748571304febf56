"""`prefixq submit` formats: docs, questions and OpenAI batch files.

Validation runs against a real redis-server without workers: a file that fails leaves Redis
empty, and every problem names file, line and field. The round trips at the end (marked
``vllm``) submit each format through the CLI to two real vLLM workers.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from redis import Redis
from rq.job import Job

from common import keys
from common.codec import serializer
from common.schema import Completion
from producer.cli import main
from producer.inputs import MAX_LINE_BYTES, iter_lines, read_inputs
from producer.output import openai_batch_line
from producer.results import JobResult
from tests.test_cli import work_off

DOC = "France is a country in Western Europe. Its capital is Paris, on the river Seine."
LONG_DOC = "word " * 5000  # beyond the model's context of 4096 tokens


def chat(custom_id: str, content: str = "Say hi.", **body: Any) -> dict[str, Any]:
    return {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions",
            "body": {"model": "any", "messages": [{"role": "user", "content": content}], **body}}


def completion(custom_id: str, prompt: Any = "Say hi.", **body: Any) -> dict[str, Any]:
    return {"custom_id": custom_id, "method": "POST", "url": "/v1/completions",
            "body": {"prompt": prompt, **body}}


def docs_line(doc_id: Any, *questions: str, **extra: Any) -> dict[str, Any]:
    return {"id": doc_id, "document": DOC, "questions": list(questions) or ["Capital?"], **extra}


def question_line(line_id: Any, question: str = "Capital?", **extra: Any) -> dict[str, Any]:
    return {"id": line_id, "document": DOC, "question": question, **extra}


def jsonl(*objs: Any) -> bytes:
    return b"".join(json.dumps(obj).encode() + b"\n" for obj in objs)


def write(tmp_path: Path, name: str, content: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


def submit(scratch_url: str, *args: str, input: bytes | None = None) -> Result:
    return CliRunner().invoke(main, ["submit", *args, "--redis-url", scratch_url], input=input)


def submitted_tags(redis: Redis, submission_id: str) -> list[str]:
    return [t.decode() if isinstance(t, bytes) else t
            for t in redis.lrange(keys.submission_tags_key(submission_id), 0, -1)]


def num_queued(redis: Redis) -> int:
    return int(redis.llen("rq:queue:gpu0") + redis.llen("rq:queue:gpu1"))


# -- validation: nothing is enqueued, every problem names file:line: field ------------------------

GOOD_DOCS = docs_line("ok")
GOOD_QUESTION = question_line("ok")
GOOD_CHAT = chat("ok")

CASES: list[tuple[str, Any, bytes, str]] = [  # (case, first line, bad second line, expected)
    # docs
    ("docs-truncated", GOOD_DOCS, b'{"id": "b", "document": "D", "questions": ["q"', ":2: line: invalid JSON, truncated"),
    ("docs-invalid-json", GOOD_DOCS, b'{"id": b}', ":2: line: invalid JSON"),
    ("docs-utf8", GOOD_DOCS, b'{"id": "b", "document": "\xff\xfe", "questions": ["q"]}', ":2: line: invalid UTF-8"),
    ("docs-not-object", GOOD_DOCS, b'["b"]', ":2: line: expected a JSON object, got array"),
    ("docs-id-type", GOOD_DOCS, jsonl(docs_line(["b"])), ":2: id: missing or not a non-empty string (got an array)"),
    ("docs-id-missing", GOOD_DOCS, jsonl({"document": DOC, "questions": ["q"]}), ":2: id: missing"),
    ("docs-document-empty", GOOD_DOCS, jsonl({"id": "b", "document": " ", "questions": ["q"]}),
     ":2: document: missing or not a non-empty string (got an empty string)"),
    ("docs-document-type", GOOD_DOCS, jsonl({"id": "b", "document": 3, "questions": ["q"]}), ":2: document:"),
    ("docs-no-questions", GOOD_DOCS, jsonl({"id": "b", "document": DOC, "questions": []}),
     ":2: questions: missing or not a non-empty list (got an empty array)"),
    ("docs-question-empty", GOOD_DOCS, jsonl(docs_line("b", "ok", "")), ":2: questions[1]: not a non-empty string"),
    ("docs-unknown-field", GOOD_DOCS, jsonl(docs_line("b", colour="red")), ":2: colour: unknown field"),
    ("docs-duplicate", GOOD_DOCS, jsonl(docs_line("ok")), ":2: id: duplicate id 'ok' (first on line 1)"),
    ("docs-temperature", GOOD_DOCS, jsonl(docs_line("b", sampling={"temperature": -0.5})),
     ":2: sampling.temperature: must be a number >= 0, got -0.5"),
    ("docs-max-tokens", GOOD_DOCS, jsonl(docs_line("b", sampling={"max_tokens": 0})),
     ":2: sampling.max_tokens: must be an integer >= 1, got 0"),
    ("docs-top-p-zero", GOOD_DOCS, jsonl(docs_line("b", sampling={"top_p": 0})), ":2: sampling.top_p: must be a number in (0, 1]"),
    ("docs-top-p-big", GOOD_DOCS, jsonl(docs_line("b", sampling={"top_p": 1.01})), ":2: sampling.top_p:"),
    ("docs-seed-float", GOOD_DOCS, jsonl(docs_line("b", sampling={"seed": 1.5})), ":2: sampling.seed: must be an integer"),
    ("docs-seed-string", GOOD_DOCS, jsonl(docs_line("b", sampling={"seed": "7"})), ":2: sampling.seed: must be an integer"),
    ("docs-sampling-unknown", GOOD_DOCS, jsonl(docs_line("b", sampling={"best_of": 2})),
     ":2: sampling.best_of: unknown sampling parameter"),
    ("docs-sampling-type", GOOD_DOCS, jsonl(docs_line("b", sampling=[0.5])), ":2: sampling: must be an object"),
    ("docs-sampling-nan", GOOD_DOCS, b'{"id": "b", "document": "D", "questions": ["q"], "sampling": {"temperature": NaN}}',
     ":2: sampling.temperature: must be a number >= 0, got NaN"),
    # questions
    ("questions-missing", GOOD_QUESTION, jsonl({"id": "b", "document": DOC}),
     ":2: question: missing or not a non-empty string (not given)"),
    ("questions-empty", GOOD_QUESTION, jsonl(question_line("b", "")), ":2: question: missing or not a non-empty string"),
    ("questions-document-type", GOOD_QUESTION, jsonl({"id": "b", "document": None, "question": "q"}),
     ":2: document: missing or not a non-empty string (got null)"),
    ("questions-id-bool", GOOD_QUESTION, jsonl(question_line(True)), ":2: id: missing or not a non-empty string (got true)"),
    ("questions-duplicate", GOOD_QUESTION, jsonl(question_line("ok")), ":2: id: duplicate id 'ok'"),
    ("questions-n", GOOD_QUESTION, jsonl(question_line("b", sampling={"n": 3})), ":2: sampling.n: must be 1"),
    ("questions-stop", GOOD_QUESTION, jsonl(question_line("b", sampling={"stop": [1]})), ":2: sampling.stop:"),
    # openai
    ("openai-url", GOOD_CHAT, jsonl({**chat("b"), "url": "/v1/embeddings"}),
     ":2: url: must be /v1/chat/completions or /v1/completions (got \"/v1/embeddings\")"),
    ("openai-method", GOOD_CHAT, jsonl({**chat("b"), "method": "GET"}), ":2: method: must be \"POST\""),
    ("openai-custom-id", GOOD_CHAT, jsonl({**chat("b"), "custom_id": ""}), ":2: custom_id: missing or not a non-empty string"),
    ("openai-body-type", GOOD_CHAT, jsonl({**chat("b"), "body": "hi"}), ":2: body: missing or not an object"),
    ("openai-messages-empty", GOOD_CHAT, jsonl({**chat("b"), "body": {"messages": []}}), ":2: body.messages: must be a non-empty list"),
    ("openai-role", GOOD_CHAT, jsonl({**chat("b"), "body": {"messages": [{"role": "robot", "content": "x"}]}}),
     ":2: body.messages[0].role: must be one of"),
    ("openai-content-part", GOOD_CHAT, jsonl({**chat("b"), "body": {"messages": [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}}),
     ":2: body.messages[0].content[0]: only"),
    ("openai-unsupported-key", GOOD_CHAT, jsonl(chat("b", logprobs=True)), ":2: body.logprobs: not supported by prefixq"),
    ("openai-n", GOOD_CHAT, jsonl(chat("b", n=2)), ":2: body.n: must be 1"),
    ("openai-stream", GOOD_CHAT, jsonl(chat("b", stream=True)), ":2: body.stream: must be false"),
    ("openai-max-completion-tokens", GOOD_CHAT, jsonl(chat("b", max_completion_tokens=0)),
     ":2: body.max_completion_tokens: must be an integer >= 1, got 0"),
    ("openai-both-max", GOOD_CHAT, jsonl(chat("b", max_tokens=4, max_completion_tokens=4)),
     ":2: body.max_completion_tokens: give max_tokens or max_completion_tokens, not both"),
    ("openai-temperature", GOOD_CHAT, jsonl(chat("b", temperature=-1)), ":2: body.temperature: must be a number >= 0"),
    ("openai-top-p", GOOD_CHAT, jsonl(chat("b", top_p=2)), ":2: body.top_p: must be a number in (0, 1]"),
    ("openai-seed", GOOD_CHAT, jsonl(chat("b", seed=0.5)), ":2: body.seed: must be an integer"),
    ("openai-prompt-list", GOOD_CHAT, jsonl(completion("b", prompt=["a", "b"])), ":2: body.prompt: missing or not a non-empty string"),
    ("openai-prompt-on-chat", GOOD_CHAT, jsonl({**chat("b"), "body": {"prompt": "x"}}), ":2: body.prompt: not taken by /v1/chat/completions"),
    ("openai-duplicate", GOOD_CHAT, jsonl(completion("ok")), ":2: custom_id: duplicate id 'ok' (first on line 1)"),
]


@pytest.mark.parametrize("first, second, expected", [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_a_bad_line_names_file_line_and_field_and_nothing_is_enqueued(
        redis: Redis, scratch_url: str, tmp_path: Path, first: Any, second: bytes, expected: str) -> None:
    path = write(tmp_path, "in.jsonl", jsonl(first) + second.rstrip(b"\n") + b"\n")
    result = submit(scratch_url, str(path))
    assert result.exit_code == 1, result.output
    assert f"{path}{expected}" in result.stderr
    assert "nothing was enqueued" in result.stderr
    assert redis.dbsize() == 0


def test_every_problem_of_every_file_is_listed(redis: Redis, scratch_url: str, tmp_path: Path) -> None:
    docs = write(tmp_path, "docs.jsonl", jsonl(docs_line("a"), docs_line("", "q"), docs_line("c", sampling={"top_p": 0})))
    questions = write(tmp_path, "questions.jsonl", jsonl(question_line("q1"), {"id": "q2", "document": "", "question": "?"}))
    result = submit(scratch_url, str(docs), str(questions))
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0].startswith("prefixq: error: 3 problem(s) in the input, nothing was enqueued")
    assert result.stderr.splitlines()[1:] == [
        f"{docs}:2: id: missing or not a non-empty string (got an empty string)",
        f"{docs}:3: sampling.top_p: must be a number in (0, 1], got 0",
        f"{questions}:2: document: missing or not a non-empty string (got an empty string)",
    ]
    assert redis.dbsize() == 0


def test_duplicate_ids_across_files(redis: Redis, scratch_url: str, tmp_path: Path) -> None:
    first = write(tmp_path, "a.jsonl", jsonl(docs_line("a"), docs_line("b")))
    second = write(tmp_path, "b.jsonl", jsonl(docs_line("c"), docs_line("b")))
    result = submit(scratch_url, str(first), str(second))
    assert result.exit_code == 1
    assert f"{second}:2: id: duplicate id 'b' (first on {first}:2)" in result.stderr
    assert redis.dbsize() == 0


def test_result_ids_clashing_across_formats(redis: Redis, scratch_url: str, tmp_path: Path) -> None:
    docs = write(tmp_path, "docs.jsonl", jsonl(docs_line("a")))
    questions = write(tmp_path, "questions.jsonl", jsonl(question_line("a/0")))
    result = submit(scratch_url, str(docs), str(questions))
    assert result.exit_code == 1
    assert f"{questions}:1: id: result id 'a/0' is also the result id of {docs}:1" in result.stderr
    assert redis.dbsize() == 0


@pytest.mark.parametrize("content", [b"", b"\n  \n"], ids=["empty", "blank"])
def test_an_empty_file_among_good_ones(redis: Redis, scratch_url: str, tmp_path: Path, content: bytes) -> None:
    good = write(tmp_path, "good.jsonl", jsonl(docs_line("a")))
    empty = write(tmp_path, "empty.jsonl", content)
    result = submit(scratch_url, str(good), str(empty))
    assert result.exit_code == 1
    assert f"{empty}:1: file: no input lines (the file is empty or blank)" in result.stderr
    assert redis.dbsize() == 0


def test_a_line_that_fits_no_format(redis: Redis, scratch_url: str, tmp_path: Path) -> None:
    path = write(tmp_path, "in.jsonl", b"\n" + jsonl({"prompt": "hi"}))
    result = submit(scratch_url, str(path))
    assert result.exit_code == 1
    assert f"{path}:2: line: cannot tell the format from its keys (prompt); use --format" in result.stderr
    assert redis.dbsize() == 0


def test_a_line_of_another_format_in_an_auto_detected_file(redis: Redis, scratch_url: str,
                                                           tmp_path: Path) -> None:
    path = write(tmp_path, "in.jsonl", jsonl(docs_line("a"), chat("b"), question_line("c")))
    result = submit(scratch_url, str(path))
    assert result.exit_code == 1
    assert result.stderr.splitlines()[1:] == [
        f"{path}:2: line: has the keys of the openai format, but this file is docs (one format per file, "
        "from its first line)",
        f"{path}:3: line: has the keys of the questions format, but this file is docs (one format per file, "
        "from its first line)"]
    assert redis.dbsize() == 0


def test_a_forced_format_checks_every_line_against_it(redis: Redis, scratch_url: str, tmp_path: Path) -> None:
    path = write(tmp_path, "in.jsonl", jsonl(docs_line("a")))
    result = submit(scratch_url, str(path), "--format", "questions")
    assert result.exit_code == 1
    assert f"{path}:1: questions: unknown field" in result.stderr
    assert f"{path}:1: question: missing or not a non-empty string (not given)" in result.stderr
    assert redis.dbsize() == 0


def test_a_huge_line_is_refused(redis: Redis, scratch_url: str, tmp_path: Path) -> None:
    huge = b'{"id": "b", "document": "' + b"x" * MAX_LINE_BYTES + b'", "questions": ["q"]}\n'
    path = write(tmp_path, "in.jsonl", jsonl(docs_line("a")) + huge + jsonl(docs_line("c")))
    result = submit(scratch_url, str(path))
    assert result.exit_code == 1
    assert f"{path}:2: line: {len(huge):,} bytes, over the limit of {MAX_LINE_BYTES:,} bytes per line" in result.stderr
    assert redis.dbsize() == 0


class _CountingStream(io.BytesIO):
    """Records the largest piece read at once."""

    largest = 0

    def readline(self, size: int | None = -1) -> bytes:
        line = super().readline(size)
        self.largest = max(self.largest, len(line))
        return line


def test_a_huge_line_is_never_held_whole() -> None:
    stream = _CountingStream(b"short\n" + b"y" * 5000 + b"\nlast")
    lines = list(iter_lines(stream, 100))
    assert lines == [(1, b"short\n", 6), (2, None, 5001), (3, b"last", 4)]
    assert stream.largest <= 101


def test_the_line_limit_is_exact() -> None:
    fits = list(iter_lines(io.BytesIO(b"x" * 10 + b"\n" + b"y" * 10), 10))
    assert fits == [(1, b"x" * 10 + b"\n", 11), (2, b"y" * 10, 10)]
    assert list(iter_lines(io.BytesIO(b"z" * 11), 10)) == [(1, None, 11)]


def test_stdin_is_named_in_problems(redis: Redis, scratch_url: str) -> None:
    result = submit(scratch_url, "-", input=jsonl(question_line("a")) + b'{"id": "b"\n')
    assert result.exit_code == 1
    assert "<stdin>:2: line: invalid JSON, truncated" in result.stderr
    assert redis.dbsize() == 0


def test_stdin_can_be_given_once(scratch_url: str) -> None:
    result = submit(scratch_url, "-", "-", input=b"")
    assert result.exit_code == 2 and "only once" in result.stderr


def test_cli_sampling_defaults_are_checked(redis: Redis, scratch_url: str, tmp_path: Path) -> None:
    path = write(tmp_path, "in.jsonl", jsonl(docs_line("a")))
    for option, value in (("--temperature", "-1"), ("--max-tokens", "0"), ("--top-p", "0"), ("--seed", "1.5")):
        result = submit(scratch_url, str(path), option, value)
        assert result.exit_code == 2 and option in result.stderr, (option, result.output)
    assert redis.dbsize() == 0


@pytest.mark.parametrize("line, field", [
    (question_line("big", document=LONG_DOC), ":2: document: the prompt has"),
    (docs_line("big", "Q1?", "Q2?", document=LONG_DOC), ":2: document: the prompt for question 1 has"),
    (chat("big", LONG_DOC), ":2: body.messages: the prompt has"),
    (completion("big", LONG_DOC), ":2: body.prompt: the prompt has"),
], ids=["questions", "docs", "openai-chat", "openai-completions"])
def test_a_prompt_beyond_the_context_names_file_line_and_field(
        redis: Redis, scratch_url: str, model_path: str, tmp_path: Path, line: Any, field: str) -> None:
    first = question_line("ok") if "question" in line else docs_line("ok") if "questions" in line else chat("ok")
    path = write(tmp_path, "in.jsonl", jsonl(first, line))
    result = submit(scratch_url, str(path))
    assert result.exit_code == 1
    assert f"{path}{field}" in result.stderr and "beyond the model's context of 4096" in result.stderr
    assert redis.dbsize() == 0


# -- --skip-invalid -----------------------------------------------------------------------------


def test_skip_invalid_submits_the_valid_lines_and_warns(redis: Redis, scratch_url: str, model_path: str,
                                                        tmp_path: Path) -> None:
    path = write(tmp_path, "in.jsonl", jsonl(question_line("a"), question_line("b", "")) + b"{oops\n"
                 + jsonl(question_line("big", document=LONG_DOC), question_line("c")))
    result = submit(scratch_url, str(path), "--skip-invalid", "--submission-id", "s1")
    assert result.exit_code == 0, result.output
    assert result.stdout == "s1\n"
    warnings = [line for line in result.stderr.splitlines() if line.startswith("prefixq: warning: ")]
    assert any(f"{path}:2: question: missing" in w for w in warnings)
    assert any(f"{path}:3: line: invalid JSON" in w for w in warnings)
    assert any(f"{path}:4: document: the prompt has" in w for w in warnings)
    assert submitted_tags(redis, "s1") == ["a", "c"]
    assert num_queued(redis) == 2


def test_skip_invalid_with_nothing_valid(redis: Redis, scratch_url: str, tmp_path: Path) -> None:
    path = write(tmp_path, "in.jsonl", b"{oops\n")
    result = submit(scratch_url, str(path), "--skip-invalid")
    assert result.exit_code == 1
    assert f"prefixq: warning: {path}:1: line: invalid JSON" in result.stderr
    assert "nothing to submit" in result.stderr
    assert redis.dbsize() == 0


# -- what gets enqueued -------------------------------------------------------------------------


def job_sampling(redis: Redis, job_id: str) -> dict[str, Any]:
    job = Job.fetch(job_id, connection=redis, serializer=serializer)
    sampling: dict[str, Any] = job.args[0]["s"]
    return sampling


def test_formats_are_detected_per_file_and_kept_in_input_order(redis: Redis, scratch_url: str,
                                                               model_path: str, tmp_path: Path) -> None:
    docs = write(tmp_path, "docs.jsonl", jsonl(docs_line("d1", "Q1?", "Q2?"), docs_line("d2")))
    questions = write(tmp_path, "questions.jsonl", jsonl(question_line("q1"), question_line("q2")))
    batch = write(tmp_path, "batch.jsonl", jsonl(chat("r1"), completion("r2")))
    result = submit(scratch_url, str(docs), str(questions), "-", str(batch), "--submission-id", "s1",
                    input=jsonl(question_line("from-stdin")))
    assert result.exit_code == 0, result.output
    assert submitted_tags(redis, "s1") == [
        "d1/0", "d1/1", "d2/0", "q1", "q2", "from-stdin", "r1", "r2"]
    assert num_queued(redis) == 8


def test_sampling_defaults_and_per_line_overrides(redis: Redis, scratch_url: str, model_path: str,
                                                  tmp_path: Path) -> None:
    files = [write(tmp_path, "docs.jsonl", jsonl(docs_line("d", sampling={"temperature": 0, "stop": ["\n"]}))),
             write(tmp_path, "questions.jsonl", jsonl(question_line("q"))),
             write(tmp_path, "batch.jsonl", jsonl(chat("c", max_completion_tokens=5, top_p=0.5, model="ignored")))]
    result = submit(scratch_url, *map(str, files), "--submission-id", "s1", "--max-tokens", "9",
                    "--temperature", "0.7", "--top-p", "0.9", "--seed", "3")
    assert result.exit_code == 0, result.output
    assert job_sampling(redis, "s1-0") == {"max_tokens": 9, "temperature": 0, "top_p": 0.9, "seed": 3,
                                           "stop": ["\n"]}
    assert job_sampling(redis, "s1-1") == {"max_tokens": 9, "temperature": 0.7, "top_p": 0.9, "seed": 3}
    assert job_sampling(redis, "s1-2") == {"max_tokens": 5, "temperature": 0.7, "top_p": 0.5, "seed": 3}


def test_policy_is_passed_to_the_router(redis: Redis, scratch_url: str, model_path: str,
                                        tmp_path: Path) -> None:
    path = write(tmp_path, "in.jsonl", jsonl(docs_line("d", "A?", "B?", "C?", "D?")))
    assert submit(scratch_url, str(path), "--submission-id", "aff").exit_code == 0
    assert {redis.llen("rq:queue:gpu0"), redis.llen("rq:queue:gpu1")} == {0, 4}  # one document, one shard
    redis.flushdb()
    assert submit(scratch_url, str(path), "--submission-id", "rr", "--policy", "round-robin").exit_code == 0
    assert (redis.llen("rq:queue:gpu0"), redis.llen("rq:queue:gpu1")) == (2, 2)


# -- output -------------------------------------------------------------------------------------


def _completion(text: str = "Hello!") -> Completion:
    return Completion(text=text, finish_reason="length", prompt_tokens=20, cached_tokens=16,
                      completion_tokens=3, shard="gpu0", worker="w")


def test_openai_batch_output_lines() -> None:
    ok = openai_batch_line(JobResult("s-0", "r1", _completion()), "r1", "/v1/chat/completions", "M", created=5)
    assert ok == {
        "id": "batch_req_s-0", "custom_id": "r1", "error": None,
        "response": {"status_code": 200, "request_id": "s-0", "body": {
            "id": "chatcmpl-s-0", "object": "chat.completion", "created": 5, "model": "M",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello!"},
                         "logprobs": None, "finish_reason": "length"}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 3, "total_tokens": 23,
                      "prompt_tokens_details": {"cached_tokens": 16}}}}}
    text = openai_batch_line(JobResult("s-1", "r2", _completion()), "r2", "/v1/completions", "M", created=5)
    assert text["response"]["body"]["object"] == "text_completion"
    assert text["response"]["body"]["choices"][0]["text"] == "Hello!"
    failed = openai_batch_line(JobResult("s-2", "r3", None, error="ValueError: bad"), "r3", "/v1/chat/completions", "M")
    assert failed == {"id": "batch_req_s-2", "custom_id": "r3", "response": None,
                      "error": {"code": "job_failed", "message": "ValueError: bad"}}
    canceled = openai_batch_line(JobResult("s-3", "r4", None, error="canceled: removed"), "r4", "/v1/completions", "M")
    assert canceled["error"]["code"] == "batch_cancelled"


def test_submit_wait_writes_each_format_in_its_output_shape(redis: Redis, scratch_url: str,
                                                            model_path: str, tmp_path: Path) -> None:
    """Without an engine: jobs are finished by a worker's own bookkeeping (tests.test_cli)."""
    batch = write(tmp_path, "batch.jsonl", jsonl(chat("r1"), completion("r2")))
    questions = write(tmp_path, "questions.jsonl", jsonl(question_line("q1", "Where?")))
    args = [str(batch), str(questions), "--submission-id", "s1", "--policy", "round-robin"]
    assert submit(scratch_url, *args).exit_code == 0
    work_off(redis, "gpu0", num_jobs=2)  # r1, q1
    work_off(redis, "gpu1", num_jobs=1, error="engine said no")  # r2
    out = tmp_path / "out.jsonl"
    result = submit(scratch_url, *args, "--wait", "--timeout", "10", "--output", str(out))
    assert result.exit_code == 1 and "1 of 3 job(s) failed" in result.stderr
    r1, r2, q1 = (json.loads(line) for line in out.read_text().splitlines())
    assert r1["custom_id"] == "r1" and r1["error"] is None
    assert r1["response"]["body"]["choices"][0]["message"]["content"] == "answer to r1"
    assert r1["response"]["body"]["model"] == "SmolLM2-135M-Instruct"
    assert r2 == {"id": "batch_req_s1-1", "custom_id": "r2", "response": None,
                  "error": {"code": "job_failed", "message": "engine said no"}}
    assert (q1["id"], q1["question"], q1["answer"]) == ("q1", "Where?", "answer to q1")


def test_output_and_timeout_need_wait(scratch_url: str, tmp_path: Path) -> None:
    path = write(tmp_path, "in.jsonl", jsonl(docs_line("a")))
    result = submit(scratch_url, str(path), "--output", str(tmp_path / "out.jsonl"))
    assert result.exit_code == 2 and "need --wait" in result.stderr


def test_read_inputs_keeps_the_document_records(tmp_path: Path) -> None:
    path = write(tmp_path, "in.jsonl", jsonl(docs_line("a", "Q1?", "Q2?", sampling={"seed": 1})))
    inputs = read_inputs([str(path)])
    assert inputs.problems == []
    assert [(d.id, d.questions, d.sampling, d.file, d.line) for d in inputs.documents] == [
        ("a", ["Q1?", "Q2?"], {"seed": 1}, str(path), 1)]
    assert [(e.tag, e.question, e.where) for e in inputs.entries] == [
        ("a/0", "Q1?", f"{path}:1"), ("a/1", "Q2?", f"{path}:1")]


# -- round trips with real workers --------------------------------------------------------------

ROUND_TRIPS = {
    "docs": [docs_line("france", "What is the capital?", "Which river?"),
             {"id": "tea", "document": "Tea is made by pouring hot water over dried tea leaves.",
              "questions": ["How is tea made?"], "sampling": {"temperature": 0}}],
    "questions": [question_line("q1", "What is the capital?"), question_line("q2", "Which river?"),
                  {"id": "q3", "document": "Tea is made with hot water.", "question": "How is tea made?"}],
    "openai": [chat("c1", "What is the capital of France?", max_completion_tokens=8, temperature=0),
               {**chat("c2"), "body": {"model": "SmolLM2", "messages": [
                   {"role": "system", "content": "Be terse."}, {"role": "user", "content": "Name a colour."}]}},
               completion("c3", "Name a fruit.", max_tokens=6)],
}


@pytest.mark.vllm
@pytest.mark.parametrize("fmt", list(ROUND_TRIPS))
def test_round_trip_through_real_workers(workers: object, worker_url: str, tmp_path: Path, fmt: str) -> None:
    path = write(tmp_path, f"{fmt}.jsonl", jsonl(*ROUND_TRIPS[fmt]))
    out = tmp_path / "out.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "producer.cli", "submit", str(path), "--redis-url", worker_url,
         "--wait", "--output", str(out), "--max-tokens", "8", "--timeout", "600"],
        capture_output=True, text=True, timeout=700)
    assert proc.returncode == 0, proc.stderr
    assert keys.is_valid_id(proc.stdout.strip().splitlines()[-1])
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    if fmt == "openai":
        assert [line["custom_id"] for line in lines] == ["c1", "c2", "c3"]
        for line in lines:
            assert line["error"] is None and line["response"]["status_code"] == 200
            body = line["response"]["body"]
            assert body["usage"]["completion_tokens"] >= 1
        chats = [line["response"]["body"] for line in lines[:2]]
        assert all(b["object"] == "chat.completion" for b in chats)
        assert all(b["choices"][0]["message"]["content"].strip() for b in chats)
        assert "Paris" in chats[0]["choices"][0]["message"]["content"]
        text = lines[2]["response"]["body"]
        assert text["object"] == "text_completion" and text["choices"][0]["text"].strip()
        assert text["usage"]["completion_tokens"] <= 6
        return
    expected = ["france/0", "france/1", "tea/0"] if fmt == "docs" else ["q1", "q2", "q3"]
    assert [line["id"] for line in lines] == expected
    assert [line["question"] for line in lines] == ["What is the capital?", "Which river?", "How is tea made?"]
    for line in lines:
        assert line["answer"].strip() and line["shard"] in ("gpu0", "gpu1")
        assert 1 <= line["usage"]["completion_tokens"] <= 8
