"""The built-in model folder and model resolution."""

from __future__ import annotations

import json
from pathlib import Path

from common.model import BUILTIN_MODEL_NAME, is_prepared, resolve_model


def test_builtin_folder_is_complete(model_path: str) -> None:
    folder = Path(model_path)
    assert folder.name == BUILTIN_MODEL_NAME and is_prepared(folder)
    config = json.loads((folder / "config.json").read_text())
    assert config["architectures"] == ["LlamaForCausalLM"] and "quantization_config" not in config
    assert (folder / "model.safetensors").stat().st_size > 200_000_000
    assert (folder / "tokenizer.json").is_file()


def test_resolve_model(model_path: str) -> None:
    assert resolve_model(None) == model_path
    assert resolve_model("") == model_path
    assert resolve_model(BUILTIN_MODEL_NAME) == model_path
    assert resolve_model("/models/other") == "/models/other"


def test_incomplete_folder_is_not_prepared(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    assert not is_prepared(tmp_path)
