"""Reading ``prefixq submit`` files, validated before anything is enqueued.

One JSON object per line (blank lines are skipped), in one of three formats:

- ``docs``: ``{"id", "document", "questions": [...], "sampling"?: {...}}``; result ids
  ``<id>/<question index>``.
- ``questions``: ``{"id", "document", "question", "sampling"?: {...}}``; result id ``id``.
- ``openai``: the OpenAI Batch API input as vLLM's ``run_batch`` reads it, ``{"custom_id",
  "method": "POST", "url": "/v1/chat/completions", "body": {"messages": [...], ...}}``; or
  ``"url": "/v1/completions"`` with ``body.prompt`` a string, rendered as one user turn.

``auto`` takes each file's format from the keys of its first JSON object. Every problem is
reported as ``file:line: field: what is wrong``; a line longer than ``max_line_bytes`` is refused
without being held in memory.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, BinaryIO

from common.errors import InputError
from common.prompts import Message, check_messages, document_messages, prompt_messages
from common.schema import SAMPLING_KEYS
from producer.items import Item

MAX_LINE_BYTES = 16 * 1024 * 1024
STDIN = "-"
STDIN_NAME = "<stdin>"
CHAT_URL = "/v1/chat/completions"
COMPLETIONS_URL = "/v1/completions"


class Format(str, Enum):
    """Input file formats of ``prefixq submit``."""

    AUTO = "auto"
    DOCS = "docs"
    QUESTIONS = "questions"
    OPENAI = "openai"


_LABELS = {Format.DOCS: "document-question", Format.QUESTIONS: "question",
           Format.OPENAI: "OpenAI batch request", Format.AUTO: "input"}


@dataclass(frozen=True)
class Entry:
    """One request read from an input line, and what its result line needs."""

    fmt: Format
    tag: str  # the result id: "<document id>/<question index>", the line's id, or custom_id
    messages: list[Message]
    sampling: dict[str, Any]
    file: str
    line: int
    question: str | None = None  # docs/questions: echoed in the result line
    url: str | None = None  # openai: the endpoint, whose response shape the result is written in

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def prompt_field(self) -> str:
        """The field a too-long prompt is blamed on, and which prompt of the line it is."""
        if self.fmt is Format.DOCS:
            return f"document: the prompt for question {self.tag.rsplit('/', 1)[1]}"
        if self.fmt is Format.QUESTIONS:
            return "document: the prompt"
        return f"body.{'prompt' if self.url == COMPLETIONS_URL else 'messages'}: the prompt"

    def item(self, defaults: Mapping[str, Any]) -> Item:
        """The request to submit; the line's own sampling values win over ``defaults``."""
        return Item(self.messages, tag=self.tag, sampling={**defaults, **self.sampling})


@dataclass(frozen=True)
class DocumentQuestions:
    """One line of a document-question file."""

    id: str
    document: str
    questions: list[str]
    line: int
    sampling: dict[str, Any] = field(default_factory=dict)
    file: str = ""

    def entries(self) -> list[Entry]:
        return [Entry(Format.DOCS, f"{self.id}/{i}", document_messages(self.document, q), self.sampling,
                      self.file, self.line, question=q) for i, q in enumerate(self.questions)]


@dataclass(frozen=True)
class Inputs:
    """What a set of files held: the valid requests in input order, and every problem found."""

    entries: list[Entry]
    problems: list[str]
    documents: list[DocumentQuestions]  # the docs-format lines among them


def read_document_questions(path: Path) -> list[DocumentQuestions]:
    """Parse and validate a document-question file; raise :class:`InputError` listing every problem."""
    inputs = read_inputs([str(path)], Format.DOCS)
    if inputs.problems:
        raise InputError("\n".join(inputs.problems))
    return inputs.documents


def read_inputs(paths: Sequence[str], fmt: Format | str = Format.AUTO, *,
                max_line_bytes: int = MAX_LINE_BYTES, stdin: BinaryIO | None = None) -> Inputs:
    """Read and validate every line of ``paths`` (``-`` is stdin); ids must be unique across all."""
    reader = _Reader(Format(fmt), max_line_bytes)
    for path in paths:
        if path == STDIN:
            reader.read(STDIN_NAME, stdin or sys.stdin.buffer)
            continue
        try:
            with open(path, "rb") as stream:
                reader.read(path, stream)
        except OSError as e:
            reader.problems.append(f"{path}: file: cannot read: {e.strerror or e}")
    return Inputs(reader.entries, reader.problems, reader.documents)


def iter_lines(stream: BinaryIO, max_line_bytes: int) -> Iterator[tuple[int, bytes | None, int]]:
    """``(line number, bytes, length)`` per line; bytes is None for a line over ``max_line_bytes``,
    which is skipped in chunks, never held whole."""
    number = 0
    while True:
        raw = stream.readline(max_line_bytes + 1)
        if not raw:
            return
        number += 1
        if len(raw) <= max_line_bytes or raw.endswith(b"\n"):
            yield number, raw, len(raw)
            continue
        length, chunk_bytes = len(raw), min(max_line_bytes + 1, 1 << 20)
        while raw and not raw.endswith(b"\n"):
            raw = stream.readline(chunk_bytes)
            length += len(raw)
        yield number, None, length


class _Reader:
    """Accumulates entries and problems over the files of one submit."""

    def __init__(self, fmt: Format, max_line_bytes: int) -> None:
        self.fmt, self.max_line_bytes = fmt, max_line_bytes
        self.entries: list[Entry] = []
        self.documents: list[DocumentQuestions] = []
        self.problems: list[str] = []
        self._ids: dict[tuple[Format, str], tuple[int, str, int]] = {}  # -> (file index, file, line)
        self._tags: dict[str, str] = {}  # result id -> file:line
        self._num_files = 0

    def read(self, name: str, stream: BinaryIO) -> None:
        fmt, num_lines = self.fmt, 0
        self._num_files += 1
        for number, raw, length in iter_lines(stream, self.max_line_bytes):
            where = f"{name}:{number}"
            if raw is not None and not raw.strip():
                continue
            num_lines += 1
            if raw is None:
                self.problems.append(f"{where}: line: {length:,} bytes, over the limit of "
                                     f"{self.max_line_bytes:,} bytes per line")
                continue
            obj = self._parse(where, raw[3:] if number == 1 and raw.startswith(b"\xef\xbb\xbf") else raw)
            if obj is None:
                continue
            if self.fmt is Format.AUTO:
                found = detect_format(obj)
                if fmt is Format.AUTO and found is Format.AUTO:
                    self.problems.append(f"{where}: line: cannot tell the format from its keys "
                                         f"({', '.join(sorted(obj)) or 'none'}); use --format")
                    return
                if found not in (Format.AUTO, fmt) and fmt is not Format.AUTO:
                    self.problems.append(f"{where}: line: has the keys of the {found.value} format, but "
                                         f"this file is {fmt.value} (one format per file, from its first line)")
                    continue
                fmt = found if fmt is Format.AUTO else fmt
            self._add(fmt, name, number, obj)
        if not num_lines:
            self.problems.append(f"{name}:1: file: no {_LABELS[fmt]} lines (the file is empty or blank)")

    def _parse(self, where: str, raw: bytes) -> dict[str, Any] | None:
        try:
            obj = json.loads(raw.decode("utf-8").rstrip("\r\n"))
        except UnicodeDecodeError as e:
            self.problems.append(f"{where}: line: invalid UTF-8 at byte {e.start}")
            return None
        except json.JSONDecodeError as e:
            is_cut = e.pos >= len(e.doc.rstrip()) or e.msg.startswith("Unterminated string")
            what = "invalid JSON, truncated" if is_cut else "invalid JSON"
            self.problems.append(f"{where}: line: {what} ({e.msg}, column {e.colno})")
            return None
        if not isinstance(obj, dict):
            self.problems.append(f"{where}: line: expected a JSON object, got {_json_type(obj)}")
            return None
        return obj

    def _add(self, fmt: Format, name: str, number: int, obj: dict[str, Any]) -> None:
        where = f"{name}:{number}"
        parse = _PARSERS[fmt]
        line_id, entries, errors = parse(obj, name, number)
        if errors:
            self.problems.extend(f"{where}: {error}" for error in errors)
            return
        id_field = "custom_id" if fmt is Format.OPENAI else "id"
        first = self._ids.get((fmt, line_id))
        if first is not None:
            at = f"line {first[2]}" if first[0] == self._num_files else f"{first[1]}:{first[2]}"
            self.problems.append(f"{where}: {id_field}: duplicate id {line_id!r} (first on {at})")
            return
        clash = next((e.tag for e in entries if e.tag in self._tags), None)
        if clash is not None:
            self.problems.append(f"{where}: {id_field}: result id {clash!r} is also the result id "
                                 f"of {self._tags[clash]}")
            return
        self._ids[(fmt, line_id)] = (self._num_files, name, number)
        self._tags.update((e.tag, where) for e in entries)
        self.entries.extend(entries)
        if fmt is Format.DOCS:
            self.documents.append(DocumentQuestions(line_id, obj["document"], list(obj["questions"]),
                                                    number, entries[0].sampling, name))


def detect_format(obj: Mapping[str, Any]) -> Format:
    """The format a line's keys belong to (``AUTO`` when they fit none)."""
    if "custom_id" in obj or ("url" in obj and "body" in obj):
        return Format.OPENAI
    if "questions" in obj:
        return Format.DOCS
    if "question" in obj:
        return Format.QUESTIONS
    return Format.AUTO


# -- the formats ---------------------------------------------------------------------------------

_Parsed = tuple[str, list[Entry], list[str]]  # (the line's id, its requests, problems)


def _parse_docs(obj: dict[str, Any], name: str, number: int) -> _Parsed:
    errors = _unknown(obj, {"id", "document", "questions", "sampling"})
    line_id = _id(obj, errors)
    document = _text(obj, "document", errors)
    questions = obj.get("questions")
    if not isinstance(questions, list) or not questions:
        errors.append(f"questions: missing or not a non-empty list ({_got(obj, 'questions')})")
    else:
        for i, question in enumerate(questions):
            if not isinstance(question, str) or not question.strip():
                errors.append(f"questions[{i}]: not a non-empty string (got {_show(question)})")
    sampling = check_sampling(obj.get("sampling", {}), "sampling", errors)
    if errors:
        return "", [], errors
    record = DocumentQuestions(line_id, document, list(questions), number, sampling, name)  # type: ignore[arg-type]
    return line_id, record.entries(), []


def _parse_questions(obj: dict[str, Any], name: str, number: int) -> _Parsed:
    errors = _unknown(obj, {"id", "document", "question", "sampling"})
    line_id = _id(obj, errors)
    document = _text(obj, "document", errors)
    question = _text(obj, "question", errors)
    sampling = check_sampling(obj.get("sampling", {}), "sampling", errors)
    if errors:
        return "", [], errors
    return line_id, [Entry(Format.QUESTIONS, line_id, document_messages(document, question), sampling,
                           name, number, question=question)], []


# Body keys of an OpenAI request that map onto prefixq's sampling parameters.
OPENAI_SAMPLING = {key: key for key in SAMPLING_KEYS} | {"max_completion_tokens": "max_tokens"}
OPENAI_IGNORED = frozenset({"model"})


def _parse_openai(obj: dict[str, Any], name: str, number: int) -> _Parsed:
    errors = _unknown(obj, {"custom_id", "method", "url", "body"})
    custom_id = obj.get("custom_id")
    if not isinstance(custom_id, str) or not custom_id:
        errors.append(f"custom_id: missing or not a non-empty string ({_got(obj, 'custom_id')})")
    if obj.get("method") != "POST":
        errors.append(f"method: must be \"POST\" ({_got(obj, 'method')})")
    url = obj.get("url")
    if url not in (CHAT_URL, COMPLETIONS_URL):
        errors.append(f"url: must be {CHAT_URL} or {COMPLETIONS_URL} ({_got(obj, 'url')})")
        return "", [], errors  # the body of another endpoint: its problems would be noise
    body = obj.get("body")
    if not isinstance(body, dict):
        errors.append(f"body: missing or not an object ({_got(obj, 'body')})")
        return "", [], errors
    messages = _openai_messages(body, url, errors)
    sampling: dict[str, Any] = {}
    for key, value in body.items():
        if key in ("messages", "prompt") or key in OPENAI_IGNORED:
            continue
        if key == "stream":
            if value is not False:
                errors.append("body.stream: must be false (a batch does not stream)")
        elif key in OPENAI_SAMPLING:
            target = OPENAI_SAMPLING[key]
            if target in sampling:
                errors.append(f"body.{key}: give max_tokens or max_completion_tokens, not both")
            sampling[target] = value
        else:
            errors.append(f"body.{key}: not supported by prefixq (it takes messages or prompt, model "
                          f"(ignored), stream (false), {', '.join(sorted(OPENAI_SAMPLING))})")
    names = {v: k for k, v in OPENAI_SAMPLING.items() if k in body}
    sampling = check_sampling(sampling, "body", errors, names=names)
    if errors or messages is None:
        return "", [], errors
    return str(custom_id), [Entry(Format.OPENAI, str(custom_id), messages, sampling, name, number,
                                  url=str(url))], []


def _openai_messages(body: dict[str, Any], url: Any, errors: list[str]) -> list[Message] | None:
    if url == COMPLETIONS_URL:
        if "messages" in body:
            errors.append(f"body.messages: not taken by {COMPLETIONS_URL} (use prompt, or {CHAT_URL})")
        prompt = body.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            errors.append(f"body.prompt: missing or not a non-empty string ({_got(body, 'prompt')}); "
                          f"prefixq takes one prompt per line")
            return None
        return prompt_messages(prompt)
    if "prompt" in body:
        errors.append(f"body.prompt: not taken by {CHAT_URL} (use messages, or {COMPLETIONS_URL})")
    raw = body.get("messages")
    if isinstance(raw, list):  # content given as text parts, as OpenAI allows: joined
        raw = [_join_text_parts(m, i, errors) for i, m in enumerate(raw)]
    try:
        return check_messages(raw)
    except InputError as e:
        errors.append(f"body.{e}")
        return None


def _join_text_parts(message: Any, index: int, errors: list[str]) -> Any:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return message
    texts = []
    for j, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
            errors.append(f"body.messages[{index}].content[{j}]: only {{\"type\": \"text\", \"text\": ...}} "
                          "parts are supported")
            continue
        texts.append(part["text"])
    return {**message, "content": "\n".join(texts)}


_PARSERS: dict[Format, Callable[[dict[str, Any], str, int], _Parsed]] = {
    Format.DOCS: _parse_docs, Format.QUESTIONS: _parse_questions, Format.OPENAI: _parse_openai}


# -- sampling ------------------------------------------------------------------------------------


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_integer(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_stop(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, list) and all(isinstance(s, str) and s for s in v))


# Each sampling parameter's check, mirroring what vLLM's SamplingParams accepts.
SAMPLING_RULES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "max_tokens": (lambda v: _is_integer(v) and v >= 1, "must be an integer >= 1"),
    "temperature": (lambda v: _is_number(v) and v >= 0, "must be a number >= 0"),
    "top_p": (lambda v: _is_number(v) and 0 < v <= 1, "must be a number in (0, 1]"),
    "top_k": (lambda v: _is_integer(v) and v >= -1, "must be an integer >= -1 (-1 or 0: off)"),
    "min_p": (lambda v: _is_number(v) and 0 <= v <= 1, "must be a number in [0, 1]"),
    "seed": (_is_integer, "must be an integer"),
    "stop": (_is_stop, "must be a string or a list of non-empty strings"),
    "presence_penalty": (lambda v: _is_number(v) and -2 <= v <= 2, "must be a number in [-2, 2]"),
    "frequency_penalty": (lambda v: _is_number(v) and -2 <= v <= 2, "must be a number in [-2, 2]"),
    "repetition_penalty": (lambda v: _is_number(v) and v > 0, "must be a number > 0"),
    "ignore_eos": (lambda v: isinstance(v, bool), "must be true or false"),
    "n": (lambda v: _is_integer(v) and v == 1, "must be 1 (one completion per request)"),
}


def check_sampling(obj: Any, prefix: str, errors: list[str], *,
                   names: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Validate sampling parameters, appending ``<prefix>.<key>: ...`` to ``errors``; ``names``
    gives the spelling a key had in the input (``max_completion_tokens``) for messages."""
    if not isinstance(obj, dict):
        errors.append(f"{prefix}: must be an object of sampling parameters, got {_json_type(obj)}")
        return {}
    names = names or {}
    checked: dict[str, Any] = {}
    for key, value in obj.items():
        shown = f"{prefix}.{names.get(key, key)}"
        if key not in SAMPLING_KEYS:
            errors.append(f"{shown}: unknown sampling parameter (known: {', '.join(sorted(SAMPLING_KEYS))})")
            continue
        is_valid, rule = SAMPLING_RULES.get(key, (lambda v: True, ""))
        if not is_valid(value):
            errors.append(f"{shown}: {rule}, got {_show(value)}")
            continue
        checked[key] = value
    return checked


# -- field helpers -------------------------------------------------------------------------------


def _unknown(obj: dict[str, Any], known: set[str]) -> list[str]:
    return [f"{key}: unknown field (expected {', '.join(sorted(known))})"
            for key in obj if key not in known]


def _id(obj: dict[str, Any], errors: list[str]) -> str:
    value = obj.get("id")
    if _is_integer(value):
        return str(value)
    if not isinstance(value, str) or not value:
        errors.append(f"id: missing or not a non-empty string ({_got(obj, 'id')})")
        return ""
    return value


def _text(obj: dict[str, Any], key: str, errors: list[str]) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        errors.append(f"{key}: missing or not a non-empty string ({_got(obj, key)})")
        return ""
    return value


def _got(obj: dict[str, Any], key: str) -> str:
    return "not given" if key not in obj else f"got {_show(obj[key])}"


def _show(value: Any) -> str:
    if isinstance(value, str):
        return "an empty string" if not value.strip() else json.dumps(value[:40] + ("..." if len(value) > 40 else ""))
    if isinstance(value, (dict, list)):
        return f"an empty {_json_type(value)}" if not value else f"an {_json_type(value)}"
    return json.dumps(value)


def _json_type(value: Any) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"
