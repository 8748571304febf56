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


def test_a_bom_and_crlf_line_ends_are_accepted(tmp_path: Path) -> None:
    path = write(tmp_path, b'\xef\xbb\xbf{"id": "a", "document": "D", "questions": ["q"]}\r\n'
                           b'{"id": "b", "document": "E", "questions": ["r"]}\r\n')
    assert [r.id for r in read_document_questions(path)] == ["a", "b"]


def test_per_line_sampling_is_kept(tmp_path: Path) -> None:
    path = write(tmp_path, b'{"id": "a", "document": "D", "questions": ["q"], '
                           b'"sampling": {"temperature": 0, "max_tokens": 8, "stop": ["\\n"]}}\n')
    assert read_document_questions(path)[0].sampling == {"temperature": 0, "max_tokens": 8, "stop": ["\n"]}


def test_every_problem_of_a_line_is_reported(tmp_path: Path) -> None:
    path = write(tmp_path, b'{"id": "", "document": 1, "questions": ["q"], "sampling": {"top_p": 0}}\n')
    with pytest.raises(InputError) as info:
        read_document_questions(path)
    assert str(info.value).splitlines() == [
        f"{path}:1: id: missing or not a non-empty string (got an empty string)",
        f"{path}:1: document: missing or not a non-empty string (got 1)",
        f"{path}:1: sampling.top_p: must be a number in (0, 1], got 0",
    ]


def test_stdin_and_files_share_one_id_space(tmp_path: Path) -> None:
    import io

    from producer.inputs import read_inputs

    path = write(tmp_path, b'{"id": "a", "document": "D", "question": "q"}\n')
    inputs = read_inputs([str(path), "-"], stdin=io.BytesIO(b'\n{"id": "a", "document": "E", "question": "r"}\n'))
    assert inputs.problems == [f"<stdin>:2: id: duplicate id 'a' (first on {path}:1)"]
    assert [e.tag for e in inputs.entries] == ["a"]
