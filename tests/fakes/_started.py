"""`with fake:` for every fake: started on entry, stopped on exit whatever happened."""

from __future__ import annotations

from types import TracebackType
from typing import Self


class StartedInWith:
    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
