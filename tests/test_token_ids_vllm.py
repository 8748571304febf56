"""Producers ship token ids; a worker runs them as they are only if they are its engine's own.

The built-in model's case (ids run as they are) is checked in test_metrics.py and
test_end_to_end.py. Here the model's tokenizer adds a BOS token to text prompts, as many
models' do: vLLM adds it, the producer's ids (made for routing, without special tokens) lack
it, so the worker must see the difference at start and run every prompt from its text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from common.config import Settings
from common.prompts import document_messages, load_tokenizer, render
from producer.client import Client
from producer.launch import RedisServer, WorkerProcess

pytestmark = pytest.mark.vllm

BOS_DB = 12


def with_bos(model_path: Path, folder: Path) -> Path:
    """The model in ``model_path``, its tokenizer changed to put a BOS token before text."""
    folder.mkdir()
    for file in model_path.iterdir():
        if file.name != "tokenizer.json":
            (folder / file.name).symlink_to(file)
    rules = json.loads((model_path / "tokenizer.json").read_text(encoding="utf-8"))
    bos = rules["added_tokens"][0]
    token = {"SpecialToken": {"id": bos["content"], "type_id": 0}}
    rules["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [token, {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [token, {"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {bos["content"]: {"id": bos["content"], "ids": [bos["id"]], "tokens": [bos["content"]]}},
    }
    (folder / "tokenizer.json").write_text(json.dumps(rules), encoding="utf-8")
    return folder


@pytest.fixture
def bos_worker(redis_server: RedisServer, model_path: str, tmp_path: Path) -> Iterator[tuple[str, str, WorkerProcess]]:
    url = f"redis://127.0.0.1:{redis_server.port}/{BOS_DB}"
    Redis.from_url(url).flushdb()
    folder = str(with_bos(Path(model_path), tmp_path / "bos-model"))
    proc = WorkerProcess("bos0", redis_url=url, core=0, log_dir=tmp_path,
                         env={"PREFIXQ_SHARDS": "bos0"}, extra_args=("--model", folder)).start()
    try:
        proc.wait_ready(600)
        yield url, folder, proc
    finally:
        proc.stop()


def test_a_worker_whose_engine_tokenizes_otherwise_runs_the_text(
        bos_worker: tuple[str, str, WorkerProcess]) -> None:
    url, folder, proc = bos_worker
    assert "prompts are tokenized here" in proc.log_text()
    client = Client(Settings.from_env(redis_url=url, model=folder, shards=("bos0",), max_tokens=16))
    document, question = "Paris is the capital of France.", "What is the capital of France?"
    (result,) = client.submit_document(document, [question], temperature=0.0).wait(timeout=300)
    assert result.is_ok, result.error
    tokenizer = load_tokenizer(folder)
    shipped = len(tokenizer.encode_batch([render(tokenizer, document_messages(document, question))])[0])
    # vLLM tokenized the text itself: the prompt it ran has the BOS token the shipped ids lack.
    assert result.completion.prompt_tokens == shipped + 1  # type: ignore[union-attr]
