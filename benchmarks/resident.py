"""A system under benchmark that stays up between bursts (``benchmarks.parity --resident``)."""

from __future__ import annotations

from typing import Self


class Resident:
    """Brought up (and warmed) by :meth:`start`, taken down by :meth:`close`. As a context
    manager, a start that fails takes down whatever it had brought up."""

    def start(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    @property
    def pids(self) -> list[int]:
        """The system's top processes (their children are counted with them)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
