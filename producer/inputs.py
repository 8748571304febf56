"""Reading document-question files, validated before anything is enqueued.

One JSON object per line: ``{"id": ..., "document": "...", "questions": ["...", ...]}``.
Every problem is reported as ``file:line: field: what is wrong``; blank lines are skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.errors import InputError


@dataclass(frozen=True)
class DocumentQuestions:
    """One line of a document-question file."""

    id: str
    document: str
    questions: list[str]
    line: int


def read_document_questions(path: Path) -> list[DocumentQuestions]:
    """Parse and validate ``path``; raise :class:`InputError` listing every problem found."""
    problems: list[str] = []
    records: list[DocumentQuestions] = []
    seen: dict[str, int] = {}
    try:
        raw_lines = path.read_bytes().splitlines()
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from e
    for number, raw in enumerate(raw_lines, start=1):
        if not raw.strip():
            continue
        where = f"{path}:{number}"
        try:
            obj = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            problems.append(f"{where}: line: invalid UTF-8 at byte {e.start}")
            continue
        except json.JSONDecodeError as e:
            problems.append(f"{where}: line: invalid JSON ({e.msg} at column {e.colno})")
            continue
        record, errors = _check(obj, number)
        problems.extend(f"{where}: {error}" for error in errors)
        if record is None:
            continue
        if record.id in seen:
            problems.append(f"{where}: id: duplicate id {record.id!r} (first on line {seen[record.id]})")
            continue
        seen[record.id] = number
        records.append(record)
    if not records and not problems:
        problems.append(f"{path}: file: no document-question lines")
    if problems:
        raise InputError("\n".join(problems))
    return records


def _check(obj: Any, line: int) -> tuple[DocumentQuestions | None, list[str]]:
    if not isinstance(obj, dict):
        return None, [f"line: expected a JSON object, got {type(obj).__name__}"]
    errors: list[str] = []
    doc_id = obj.get("id")
    if isinstance(doc_id, int) and not isinstance(doc_id, bool):
        doc_id = str(doc_id)
    if not isinstance(doc_id, str) or not doc_id:
        errors.append("id: missing or not a non-empty string")
    document = obj.get("document")
    if not isinstance(document, str) or not document.strip():
        errors.append("document: missing or not a non-empty string")
    questions = obj.get("questions")
    if not isinstance(questions, list) or not questions:
        errors.append("questions: missing or not a non-empty list")
    else:
        for i, question in enumerate(questions):
            if not isinstance(question, str) or not question.strip():
                errors.append(f"questions[{i}]: not a non-empty string")
    unknown = set(obj) - {"id", "document", "questions"}
    if unknown:
        errors.append(f"{sorted(unknown)[0]}: unknown field")
    if errors:
        return None, errors
    return DocumentQuestions(str(doc_id), str(document), list(questions), line), []
