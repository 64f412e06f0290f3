"""What both benchmarks share: timing, memory, corpus files, the table and the goal lines.

Two kinds of memory figure appear, and they answer different questions:

- **peak RSS** (resident set size, from ``getrusage``) of a fresh process: everything the
  process ever held in RAM at once, interpreter and libraries included. This is the only
  fair way to compare with a Rust library, whose memory Python cannot see.
- **traced peak** (from :mod:`tracemalloc`): the most memory that *new Python objects* held
  at once during one call. It ignores the interpreter and anything built before the call,
  so it isolates what the call itself needs, but it is blind to Rust and slows Python down.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
S = TypeVar("S")

#: The repository root: child processes run here so ``python -m bench...`` resolves.
REPO_ROOT = Path(__file__).resolve().parent.parent

#: CS336's reference fixtures. A fresh clone has no ``../shared``; rows that need it skip.
CS336_DIR = REPO_ROOT.parent / "shared" / "reference" / "cs336"

MB = 1_000_000


# Timing --------------------------------------------------------------------------------------


@dataclass
class Timing:
    """Wall-clock seconds of repeated runs of the same call."""

    seconds: list[float] = field(default_factory=list)

    @property
    def best(self) -> float:
        """The fastest run: noise (other programs, the garbage collector) only adds time."""
        return min(self.seconds)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def time_runs(
    run: Callable[[S], T], repeat: int, setup: Callable[[], S] = lambda: None
) -> tuple[Timing, T]:
    """Time ``run(setup())`` ``repeat`` times; only ``run`` is timed, ``setup`` is not.

    A fresh ``setup()`` for every run is how the encode benchmark gets a tokenizer with an
    empty cache each time without counting the cost of loading it.
    """
    timing = Timing()
    result: Any = None
    for _ in range(max(1, repeat)):
        state = setup()
        start = time.perf_counter()
        result = run(state)
        timing.seconds.append(time.perf_counter() - start)
    return timing, result


def traced_peak(call: Callable[[], T]) -> tuple[int, T]:
    """Bytes of new Python allocations at their peak during ``call()``, and its result."""
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    baseline = tracemalloc.get_traced_memory()[0]
    try:
        result = call()
        peak = tracemalloc.get_traced_memory()[1] - baseline
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return peak, result


# Peak RSS of a fresh process ------------------------------------------------------------------


def _proc_status_kb(field_name: str) -> int | None:
    """A ``kB`` field of ``/proc/self/status`` (Linux only; None elsewhere)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def current_rss_kb() -> int | None:
    """This process's resident memory right now, in KiB (Linux only; None elsewhere)."""
    return _proc_status_kb("VmRSS")


def _maxrss_kb(who: int) -> int:
    """``ru_maxrss`` in KiB (Linux reports KiB, macOS bytes)."""
    value = resource.getrusage(who).ru_maxrss
    return value // 1024 if sys.platform == "darwin" else value


def start_method() -> str:
    """The multiprocessing start method in use, without fixing it as a side effect."""
    return (
        multiprocessing.get_start_method(allow_none=True)
        or (multiprocessing.get_all_start_methods()[0])
    )


def peak_rss_report() -> dict[str, int | None]:
    """Peak RSS of this process and of its largest finished child process, in KiB.

    For this process we read ``VmHWM`` from ``/proc/self/status``, not
    ``getrusage(RUSAGE_SELF)``: Linux carries ``ru_maxrss`` across ``exec``, and
    :mod:`subprocess` starts children with ``vfork``, so a child's ``ru_maxrss`` starts at
    its *parent's* peak. ``VmHWM`` belongs to the new address space only.

    For the workers of a ``multiprocessing.Pool`` we use ``RUSAGE_CHILDREN``, which covers
    them once the pool has been joined (``with Pool(...)`` does that) because with ``fork``
    they are our children. It is the *largest* single worker, not a sum, and a forked
    worker's RSS also counts the pages it still shares with this process. With
    ``forkserver`` the workers are the server's children, so we report None.
    """
    main = _proc_status_kb("VmHWM") or _maxrss_kb(resource.RUSAGE_SELF)
    workers: int | None = _maxrss_kb(resource.RUSAGE_CHILDREN)
    if start_method() == "forkserver":
        workers = None
    return {"main_peak_kb": main, "worker_peak_kb": workers}


def cpu_seconds() -> float:
    """CPU time (user + system) of this process and its finished children so far."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_child(module: str, args: Sequence[str], timeout: float = 1800) -> dict[str, Any]:
    """Run ``python -m module args`` in a fresh process and return the JSON it prints last.

    A fresh process is what makes peak RSS mean "what this run needed": nothing earlier in
    the benchmark can have raised the high-water mark.
    """
    command = [sys.executable, "-m", module, *args]
    done = subprocess.run(
        command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} failed with exit code {done.returncode}:\n{done.stderr}"
        )
    return json.loads(done.stdout.strip().splitlines()[-1])


# Corpora --------------------------------------------------------------------------------------


def write_source_file(path: str | os.PathLike[str], n_bytes: int) -> Path:
    """Write ``n_bytes`` of standard-library source to ``path``, repeating it if needed.

    The standard library holds about 30 MB of source; a bigger request starts over from the
    first file (after an ``<|endoftext|>``), which is fine for timing and memory.
    """
    from bpe_course.data import ENDOFTEXT, python_source

    source = python_source(n_bytes)
    size = len(source.encode("utf-8"))
    text = source
    if size < n_bytes:
        copies = n_bytes // max(size, 1) + 1
        text = ENDOFTEXT.join([source] * copies)
    data = text.encode("utf-8")[:n_bytes].decode("utf-8", errors="ignore")
    path = Path(path)
    path.write_text(data, encoding="utf-8")
    return path


def parse_sizes(text: str) -> list[float]:
    """``"10,30"`` -> ``[10.0, 30.0]`` (megabytes, 1 MB = 1,000,000 bytes)."""
    problem = f"--sizes wants megabytes separated by commas, e.g. 10,30; got {text!r}"
    try:
        sizes = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ValueError(problem) from None
    if not sizes or any(size <= 0 for size in sizes):
        raise ValueError(problem)
    return sizes


# Reporting ------------------------------------------------------------------------------------


def format_bytes(n_bytes: float | None) -> str:
    if n_bytes is None:
        return "-"
    if n_bytes >= 10 * MB:
        return f"{n_bytes / MB:.0f} MB"
    if n_bytes >= MB:
        return f"{n_bytes / MB:.1f} MB"
    return f"{n_bytes / 1000:.0f} kB"


def format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def kib_to_bytes(kib: int | None) -> int | None:
    return None if kib is None else kib * 1024


@dataclass
class Row:
    """One line of a results table: our time beside a peer's on the same input."""

    corpus: str
    size: int
    vocab: str
    ours: float | None
    peer: float | None
    peer_name: str
    ours_memory: str = "-"
    peer_memory: str = "-"

    @property
    def ratio(self) -> float | None:
        """How many times longer we take; below 1 means we are faster."""
        if self.ours is None or not self.peer:
            return None
        return self.ours / self.peer


def print_table(title: str, rows: Sequence[Row]) -> None:
    """Print rows as an aligned text table under ``title``."""
    header = ["corpus", "size", "vocab", "ours", "peer", "time", "ratio", "ours mem", "peer mem"]
    lines = [
        [
            row.corpus,
            format_bytes(row.size),
            row.vocab,
            format_seconds(row.ours),
            row.peer_name,
            format_seconds(row.peer),
            "-" if row.ratio is None else f"{row.ratio:.2f}x",
            row.ours_memory,
            row.peer_memory,
        ]
        for row in rows
    ]
    widths = [max(len(cells[i]) for cells in [header, *lines]) for i in range(len(header))]
    left_aligned = {0, 2, 4}

    def render(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.ljust(width) if i in left_aligned else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(cells, widths))
        ).rstrip()

    print(f"\n{title}")
    print(render(header))
    print(render(["-" * width for width in widths]))
    for cells in lines:
        print(render(cells))


@dataclass
class Goal:
    """A line of the verdict. ``passed=None`` means skipped (e.g. ``../shared`` missing).

    A failed *check* means a wrong answer, and makes the script exit with status 1. A failed
    performance goal is only reported: a busy machine makes us slow, not wrong.
    """

    name: str
    passed: bool | None
    detail: str
    check: bool = False


def print_goals(goals: Sequence[Goal]) -> int:
    """Print one PASS/FAIL/SKIP line per goal; return the exit status (1 if a check failed)."""
    print()
    for goal in goals:
        verdict = {True: "PASS", False: "FAIL", None: "SKIP"}[goal.passed]
        print(f"{verdict}  {goal.name}: {goal.detail}")
    return 1 if any(goal.check and goal.passed is False for goal in goals) else 0


def package_version(name: str) -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def print_machine(packages: Sequence[str]) -> None:
    """Say where the numbers come from: ratios travel between machines, times do not."""
    cores = os.cpu_count()
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    versions = ", ".join(f"{name} {package_version(name)}" for name in packages)
    print(
        f"Python {platform.python_version()} on {platform.machine()}, {cores} cores "
        f"({usable} usable), start method {start_method()}; {versions}"
    )
    if hasattr(os, "getloadavg"):
        load = os.getloadavg()[0]
        busy = " (busy: other programs are sharing the cores, times will be noisy)"
        print(f"load average {load:.1f}{busy if load > 0.5 * (usable or 1) else ''}")
    rayon = os.environ.get("RAYON_NUM_THREADS")
    if rayon:
        print(f"RAYON_NUM_THREADS={rayon} limits Hugging Face tokenizers' threads")
