"""Stopping long work cleanly: Ctrl-C and ``kill`` (SIGTERM) while training.

Training a tokenizer can take minutes and uses worker processes. When the user presses
Ctrl-C, the terminal sends SIGINT to *every* process of the command, so without care each
worker prints its own traceback; ``kill PID`` (SIGTERM) and closing the terminal (SIGHUP)
by default end the main process at once, leaving half-written files and orphaned workers
behind.

The rule here: only the main process reacts. It turns each signal into an exception,
:class:`Interrupted`, which unwinds through ``with`` blocks and ``finally`` clauses, so the
process pool is shut down and temporary files are removed on the way out. Workers ignore
Ctrl-C and die quietly on SIGTERM (the pool sends it when it is shut down).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: The signals that mean "stop": Ctrl-C, the polite ``kill``, and a closed terminal (SIGHUP,
#: which Windows does not have).
STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)


class Interrupted(KeyboardInterrupt):
    """Raised in the main process when a stop signal arrives; ``exit_code`` is 128 + signal.

    It is a ``KeyboardInterrupt``, so code that already cleans up after Ctrl-C cleans up
    after SIGTERM and SIGHUP too.
    """

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.exit_code = 128 + signum
        super().__init__(signal.Signals(signum).name)


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextmanager
def stop_signals_raise() -> Iterator[None]:
    """Within this block, a stop signal raises :class:`Interrupted` in this process only.

    Workers started by fork inherit the handler; it ignores Ctrl-C outside the parent and
    ends a worker at once on SIGTERM or SIGHUP. Python drops an exception raised inside
    some callbacks (one runs right after each fork) and prints it as "Exception ignored";
    so a signal is remembered, such a dropped :class:`Interrupted` is kept quiet, and the
    signal is raised again when the block ends. Code inside the block should therefore
    let :class:`Interrupted` pass (clean up in ``finally``), not swallow it.
    """
    if not _in_main_thread():
        yield  # signal handlers can only be set in the main thread
        return
    parent = os.getpid()
    received: list[int] = []

    def handler(signum: int, frame: object) -> None:
        if os.getpid() != parent:
            if signum != signal.SIGINT:
                os._exit(128 + signum)
            return
        received.append(signum)
        raise Interrupted(signum)

    def quiet_if_dropped(unraisable) -> None:
        if not isinstance(unraisable.exc_value, Interrupted):
            previous_hook(unraisable)

    previous_hook, sys.unraisablehook = sys.unraisablehook, quiet_if_dropped
    previous = {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
        sys.unraisablehook = previous_hook
    if received:
        raise Interrupted(received[0])


@contextmanager
def stop_signals_deferred() -> Iterator[None]:
    """Within this block a stop signal is only remembered; it takes effect when the block ends.

    For the few steps that must not be cut in half, such as swapping a finished folder into
    place and noting that it is there. Blocking the signal with ``pthread_sigmask`` would
    not be enough: it blocks one thread, and the kernel hands the signal to another (tqdm
    and multiprocessing start threads), whose handler Python then runs in the main thread
    anyway. Replacing the Python handler works whatever thread receives the signal.
    """
    if not _in_main_thread():
        yield
        return
    received: list[int] = []
    previous = {
        signum: signal.signal(signum, lambda signum, frame: received.append(signum))
        for signum in STOP_SIGNALS
    }
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
        if received:
            signal.raise_signal(received[0])  # now handled as if it had just arrived


def ignore_stop_signals() -> None:
    """Ignore stop signals in this process, except inside :func:`stop_signals_raise`.

    For a command line: its work runs inside :func:`stop_signals_raise`, which restores
    what it found when the work is done, that is this. A Ctrl-C during Python's shutdown
    would otherwise turn a finished, reported success into "killed by SIGINT": Python
    resets its own handlers to the default before the last of its shutdown, but leaves
    an ignored signal ignored.
    """
    if _in_main_thread():
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)


def worker_ignores_ctrl_c() -> None:
    """Pool initializer: a worker ignores Ctrl-C (the main process stops the pool) and
    takes the default action for SIGTERM and SIGHUP, so shutting the pool down (or closing
    the terminal) ends it without a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for signum in STOP_SIGNALS:
        if signum != signal.SIGINT:
            signal.signal(signum, signal.SIG_DFL)
