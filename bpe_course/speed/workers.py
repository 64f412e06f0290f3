"""Work spread over processes: how workers start, how they report progress, who runs them.

Counting a corpus, encoding a batch and sharing the first merges all hand work to other
processes. They share three small rules: a worker leaves Ctrl-C to the main process, a
long job shows one progress bar that closes cleanly on the way out of an error, and an
outside :class:`concurrent.futures.Executor` (a cluster's) may run the work instead of a
local pool.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from multiprocessing.pool import Pool
from typing import Any

from ..safety import interrupts

__all__ = [
    "check_executor", "check_num_processes", "ctrl_c_held", "process_count", "progress_bar",
    "started_pool", "worker_ignores_ctrl_c",
]

#: Blocking a signal for a while needs ``pthread_sigmask`` (POSIX; not on Windows).
CAN_HOLD_SIGNALS = hasattr(signal, "pthread_sigmask") and hasattr(signal, "SIGINT")


@contextmanager
def ctrl_c_held() -> Iterator[None]:
    """Within this block Ctrl-C (SIGINT) waits: it is blocked in this thread, and so in every
    process forked and every thread started here, until the block ends.

    A forked worker starts as a copy of this process, with its handler for Ctrl-C, and
    ignores Ctrl-C only once its initializer runs. A Ctrl-C sent to the whole process
    group in between (a terminal sends it to every process of the command) used to hit the
    worker there and print its traceback. A worker started in this block gets it blocked
    instead: still pending when :func:`worker_ignores_ctrl_c` ignores it, which discards
    it, and then unblocks. Here it takes effect when the block ends.
    """
    if not CAN_HOLD_SIGNALS:
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


@contextmanager
def started_pool(
    context: Any, processes: int, initializer: Callable[..., None], initargs: tuple = ()
) -> Iterator[Pool]:
    """``with context.Pool(processes, initializer, initargs) as pool``, its workers forked
    inside :func:`ctrl_c_held`, so that none of them can see a Ctrl-C before it ignores it.

    ``initializer`` must call :func:`worker_ignores_ctrl_c`. A Ctrl-C that came while the pool
    started takes effect once the pool is ours to stop, so the block's end still terminates
    every worker (as leaving ``with Pool(...)`` does).
    """
    with ctrl_c_held():
        pool = context.Pool(processes, initializer, initargs)
    try:
        yield pool
    finally:
        pool.terminate()


def worker_ignores_ctrl_c() -> None:
    """Pool initializer: a worker ignores Ctrl-C and takes the default action for SIGTERM and
    SIGHUP (:func:`bpe_course.safety.interrupts.worker_ignores_ctrl_c`), then lets through
    the signals :func:`ctrl_c_held` blocked while it was forked: a Ctrl-C that came in the
    meantime is discarded by being ignored."""
    interrupts.worker_ignores_ctrl_c()
    if CAN_HOLD_SIGNALS:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


#: Progress-bar labels are padded to this width so stacked bars line up.
PROGRESS_LABEL_WIDTH = 12


def progress_bar(enabled: bool, total: int, desc: str, **details: Any) -> Any:
    """A tqdm bar when ``enabled`` (a widget in Jupyter), else a silent stand-in.

    ``tqdm.auto`` is imported only for a visible bar: in Jupyter without ipywidgets the
    import itself prints a warning, which would land in the output of unrelated cells.

    The bar does not draw itself while it is being made (a ``delay`` above 0), only once the
    caller's ``with`` block has begun and calls ``refresh``. tqdm draws first and sets its
    clock last, so a Ctrl-C landing in between left a bar on screen that ``close`` would not
    finish, and the error message was written on the end of its line.
    """
    if enabled:
        from tqdm.auto import tqdm
        from tqdm.notebook import tqdm as notebook_bar

        if issubclass(tqdm, notebook_bar):
            tqdm = _bar_that_stores_its_end(tqdm)
    else:
        from tqdm import tqdm
    label = desc.ljust(PROGRESS_LABEL_WIDTH)
    return tqdm(total=total, disable=not enabled, desc=label, delay=1e-9, **details)


def _bar_that_stores_its_end(notebook_bar: Any) -> Any:
    """tqdm's notebook bar, shown with a display id that ``close`` updates.

    A saved notebook keeps the text a widget had when it was first shown, so without this the
    stored output (and the slides made from it) reads ``0%`` above a finished run.
    """

    class StoredBar(notebook_bar):  # type: ignore[misc, valid-type]
        shown: Any = None

        def display(self, *args: Any, check_delay: bool = True, **kwargs: Any) -> Any:
            first = check_delay and self.delay > 0 and not self.displayed
            self.displayed = self.displayed or first  # we show it, with an id, not tqdm
            result = super().display(*args, check_delay=check_delay, **kwargs)
            if first:
                from IPython.display import display

                self.shown = display(self.container, display_id=True)
            return result

        def close(self) -> None:
            if self.disable:  # closed already (tqdm closes again when the bar is collected)
                return
            super().close()
            shown, self.shown = self.shown, None
            try:
                self.container.pbar.n  # noqa: B018 - a weak proxy: dead while being collected
            except ReferenceError:
                return
            if shown is not None:
                shown.update(self.container)

    return StoredBar


def check_executor(executor: object) -> Executor | None:
    """``None`` (a local process pool) or something with an Executor's ``submit``."""
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise TypeError(
            "executor must be a concurrent.futures.Executor (anything with submit(), such as "
            f"Dask's Client.get_executor()), got {type(executor).__name__}"
        )
    return executor  # type: ignore[return-value]


def check_num_processes(num_processes: Any) -> int | None:
    """``None`` (every core) or a whole number of worker processes, at least 1."""
    if num_processes is None:
        return None
    if isinstance(num_processes, bool) or not isinstance(num_processes, int):
        raise TypeError(f"num_processes must be an int or None, got {num_processes!r}")
    if num_processes < 1:
        raise ValueError(f"num_processes must be at least 1, got {num_processes}")
    return num_processes


def process_count(num_processes: Any) -> int:
    """How many processes ``num_processes`` asks for, checked: every core for ``None``.

    >>> process_count(3)
    3
    """
    return check_num_processes(num_processes) or os.cpu_count() or 1
