"""Document-question files: every problem named as file:line: field."""

from __future__ import annotations

from pathlib import Path

import pytest

from common.errors import InputError
from producer.inputs import read_document_questions


def write(tmp_path: Path, content: bytes) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_bytes(content)
    return path


def test_reads_valid_file_and_skips_blank_lines(tmp_path: Path) -> None:
    path = write(tmp_path, b'{"id": "a", "document": "D", "questions": ["q1", "q2"]}\n\n'
                           b'{"id": 7, "document": "E", "questions": ["q"]}\n')
    records = read_document_questions(path)
    assert [(r.id, r.questions, r.line) for r in records] == [("a", ["q1", "q2"], 1), ("7", ["q"], 3)]


@pytest.mark.parametrize("line, expected", [
    (b'{"id": "a", "document": "D", "questions": ["q"]', ":1: line: invalid JSON"),
    (b'{"id": "a", "document": "\xff", "questions": ["q"]}', ":1: line: invalid UTF-8"),
    (b'["not", "an", "object"]', ":1: line: expected a JSON object"),
    (b'{"document": "D", "questions": ["q"]}', ":1: id: missing"),
    (b'{"id": "a", "document": "", "questions": ["q"]}', ":1: document: missing or not a non-empty"),
    (b'{"id": "a", "document": "D", "questions": []}', ":1: questions: missing or not a non-empty list"),
    (b'{"id": "a", "document": "D", "questions": ["ok", 3]}', ":1: questions[1]: not a non-empty string"),
    (b'{"id": "a", "document": "D", "questions": ["q"], "extra": 1}', ":1: extra: unknown field"),
])
def test_problems_name_file_line_and_field(tmp_path: Path, line: bytes, expected: str) -> None:
    path = write(tmp_path, line + b"\n")
    with pytest.raises(InputError) as info:
        read_document_questions(path)
    assert f"{path}{expected}" in str(info.value)


def test_duplicate_ids_name_both_lines(tmp_path: Path) -> None:
    line = b'{"id": "a", "document": "D", "questions": ["q"]}\n'
    path = write(tmp_path, line + line)
    with pytest.raises(InputError, match=r":2: id: duplicate id 'a' \(first on line 1\)"):
        read_document_questions(path)


def test_empty_file(tmp_path: Path) -> None:
    path = write(tmp_path, b"\n\n")
    with pytest.raises(InputError, match="no document-question lines"):
        read_document_questions(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        read_document_questions(tmp_path / "nope.jsonl")
