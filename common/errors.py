"""The one exception hierarchy of prefixq."""

from __future__ import annotations


class PrefixqError(Exception):
    """Base class of every error prefixq raises on purpose."""


class ConfigError(PrefixqError):
    """A setting is unknown, malformed or out of range."""


class DecodeError(PrefixqError):
    """Bytes on the wire are not prefixq's format, are corrupt, or decode too large."""


class ModelError(PrefixqError):
    """The model could not be found, prepared or loaded."""


class InputError(PrefixqError):
    """An input file or request is invalid; the message names file, line and field."""


class PromptTooLongError(InputError):
    """Prompts longer than the model's context; ``lengths`` maps each one's tag to its tokens."""

    def __init__(self, lengths: dict[str, int], max_model_len: int) -> None:
        self.lengths, self.max_model_len = lengths, max_model_len
        listed = ", ".join(f"{tag} ({n} tokens)" for tag, n in list(lengths.items())[:5])
        super().__init__(f"{len(lengths)} prompt(s) do not fit the model's context of "
                         f"{max_model_len} tokens: {listed}")


class JobTimeoutError(PrefixqError):
    """Waiting for a job's result took longer than the caller allowed."""


class EngineDeadError(PrefixqError):
    """The inference engine died; the worker must exit so its supervisor restarts it."""
