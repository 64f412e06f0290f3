"""Stopping long work cleanly: Ctrl-C and ``kill`` (SIGTERM) while training.

Training a tokenizer can take minutes and uses worker processes. When the user presses
Ctrl-C, the terminal sends SIGINT to *every* process of the command, so without care each
worker prints its own traceback; ``kill PID`` (SIGTERM) by default ends the main process at
once, leaving half-written files and orphaned workers behind.

The rule here: only the main process reacts. It turns either signal into an exception,
:class:`Interrupted`, which unwinds through ``with`` blocks and ``finally`` clauses, so the
process pool is shut down and temporary files are removed on the way out. Workers ignore
Ctrl-C and die quietly on SIGTERM (the pool sends it when it is shut down).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: The signals that mean "stop": Ctrl-C and the polite ``kill``.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """Raised in the main process when a stop signal arrives; ``exit_code`` is 128 + signal.

    It is a ``KeyboardInterrupt``, so code that already cleans up after Ctrl-C cleans up
    after SIGTERM too.
    """

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.exit_code = 128 + signum
        super().__init__(signal.Signals(signum).name)


@contextmanager
def stop_signals_raise() -> Iterator[None]:
    """Within this block, SIGINT and SIGTERM raise :class:`Interrupted` in this process only.

    Workers started by fork inherit the handler; it ignores Ctrl-C outside the parent and
    ends a worker at once on SIGTERM. Python can drop an exception raised inside some
    callbacks (one runs right after each fork), so a signal at that moment is remembered
    and raised when the block ends.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set in the main thread
        return
    parent = os.getpid()
    received: list[int] = []

    def handler(signum: int, frame: object) -> None:
        if os.getpid() != parent:
            if signum == signal.SIGTERM:
                os._exit(128 + signum)
            return
        received.append(signum)
        raise Interrupted(signum)

    previous = {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
    if received:
        raise Interrupted(received[0])


def worker_ignores_ctrl_c() -> None:
    """Pool initializer: a worker ignores Ctrl-C (the main process stops the pool) and
    takes SIGTERM's default, so shutting the pool down ends it without a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
