"""What a handle on a daemon thread (scheduled snapshots, a folder watch) shares: ``stop()``,
``join()``, ``running``, and ``errors`` for what failed in the thread.

Whether the thread ended is an event the thread sets as its last act, not
``Thread.is_alive()``: on Python 3.11 a Ctrl-C that interrupts ``Thread.join(timeout)``
marks a thread that is still running as stopped, and a CLI waiting on it would exit
mid-batch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Background"]


@dataclass
class Background:
    errors: list[str] = field(default_factory=list, kw_only=True)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False, kw_only=True)
    _done: threading.Event = field(default_factory=threading.Event, repr=False, kw_only=True)
    _thread: threading.Thread | None = field(default=None, repr=False, kw_only=True)

    @property
    def running(self) -> bool:
        return self._thread is not None and not self._done.is_set()

    def stop(self, timeout: float | None = 30.0) -> None:
        """End the thread after the step in progress (if any); waits up to ``timeout`` seconds
        (None: until it ends)."""
        self._stop.set()
        self.join(timeout)

    def join(self, timeout: float | None = None) -> None:
        """Wait until the thread ends (``stop()``, or an error in ``errors``), at most ``timeout`` s."""
        if self._thread is not None:
            self._done.wait(timeout)

    def _launch(self, target: Callable[[], None], name: str) -> None:
        def run() -> None:
            try:
                target()
            finally:
                self._done.set()

        self._thread = threading.Thread(target=run, name=name, daemon=True)
        self._thread.start()
