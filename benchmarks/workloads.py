"""The shared benchmark bursts, as prefixq items."""

from __future__ import annotations

import json
from pathlib import Path

from producer.items import Item

WORKLOADS = Path(__file__).resolve().parents[2] / "shared" / "workloads"


def burst_path(name: str) -> Path:
    """``reuse-256`` or ``noreuse-64`` (or any path to a document-question file)."""
    candidate = Path(name)
    return candidate if candidate.suffix == ".jsonl" else WORKLOADS / f"{name}.jsonl"


def load_items(name: str, documents: int | None = None, **sampling: object) -> list[Item]:
    """One item per question, tagged ``<document id>/<question index>``, in file order; only the
    first ``documents`` documents if given."""
    items = []
    lines = [line for line in burst_path(name).read_text(encoding="utf-8").splitlines() if line.strip()]
    for line in lines[:documents]:
        doc = json.loads(line)
        items += [Item.document_question(doc["document"], q, tag=f"{doc['id']}/{i}", **sampling)
                  for i, q in enumerate(doc["questions"])]
    return items
