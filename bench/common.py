"""What the benchmarks share: the machine line, the gates, time and memory, one table printer.

Fairness: each side gets the same input in the same run, and only the call being compared is
timed (not loading a tokenizer, not imports). Times on a shared machine move 10-30% between
runs, so compare the *ratios* of one run; the load average at the start and the end says how
busy the machine was. Memory is measured two ways, for two questions:

- **Peak RSS** of a fresh child process (``VmHWM`` in ``/proc/self/status``, Linux only): all it
  held in RAM at once, interpreter included; the only fair comparison with Rust, whose memory
  Python cannot see. Not ``getrusage(RUSAGE_SELF)``: Linux carries ``ru_maxrss`` across the
  ``exec`` that starts a child, so it would start at the parent's peak. Workers: the *largest*
  one, not a sum, from ``getrusage(RUSAGE_CHILDREN)`` once the pool is joined; a forked worker
  also counts pages it shares with its parent. Under ``forkserver`` the workers are not our
  children, so that number is unknown.
- **Traced peak** (:mod:`tracemalloc`): the most memory *new Python objects* held at once during
  one call: what streaming needs. Blind to Rust and slow, so traced runs are never timed.
"""

from __future__ import annotations

import multiprocessing
import os
import platform
import resource
import time
import tracemalloc
from collections.abc import Callable, Sequence
from importlib import metadata
from typing import Any

from bpe_course.base import first_difference

MB = 1_000_000


def print_machine(packages: Sequence[str]) -> None:
    """Say where the numbers come from: ratios travel between machines, times do not."""
    versions = ", ".join(f"{name} {metadata.version(name)}" for name in ["bpe-course", *packages])
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, start method {start_method()}; {versions}")
    print_load("start")


def print_load(when: str) -> None:
    """The 1-minute load average: above the core count, other programs shared our cores."""
    print(f"load average at {when}: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")


def start_method() -> str:
    """The multiprocessing start method in use (the default one if none was set)."""
    chosen = multiprocessing.get_start_method(allow_none=True)
    return chosen or multiprocessing.get_all_start_methods()[0]


def check(name: str, ours: Sequence[Any] | None, expected: Sequence[Any], where: str) -> bool:
    """A gate: PASS if ``ours == expected``, else FAIL naming where they part; None: SKIP."""
    parted = None if ours is None else first_difference(ours, expected)
    if ours is None:
        print(f"SKIP  {name}: {where}")
    elif parted is None:
        print(f"PASS  {name}: identical ({len(expected):,} items), {where}")
    else:
        print(f"FAIL  {name}: they differ from item {parted} on, {where}")
    return parted is None


def best_times(repeat: int, *runs: tuple[Callable[[Any], Any], Callable[[], Any]]):
    """``[(best time, result)]`` of each ``run(setup())``; ``setup`` is not timed (it is how a
    run gets a cold tokenizer). The runs take turns, so that a busy spell of a shared machine
    falls on every side alike, and the best of ``repeat`` is kept: noise only adds time."""
    best, results = [float("inf")] * len(runs), [None] * len(runs)
    for _ in range(max(1, repeat)):
        for index, (run, setup) in enumerate(runs):
            state = setup()
            start = time.perf_counter()
            results[index] = run(state)
            best[index] = min(best[index], time.perf_counter() - start)
    return list(zip(best, results))


def traced_peak(call: Callable[[], Any]) -> tuple[int, Any]:
    """Bytes of new Python objects alive at once at the peak of ``call()``, and its result."""
    tracemalloc.start()
    try:
        result = call()
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


def peak_rss() -> tuple[int, int | None]:
    """Peak RSS in bytes of this process and of its largest joined worker (None: unknown)."""
    with open("/proc/self/status", encoding="ascii") as status:
        main = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    if start_method() == "forkserver":
        return main * 1024, None
    return main * 1024, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024


def cpu_seconds() -> float:
    """User + system CPU time of this process and of its joined children so far."""
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(each.ru_utime + each.ru_stime for each in usage)


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """The one reporter: a markdown table, ready to paste into bench/RESULTS.md."""
    print(f"\n{title}\n\n| " + " | ".join(header) + " |\n|" + " --- |" * len(header))
    for row in rows:
        print("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")


def seconds(value: float | None) -> str:
    if value is None:
        return "-"
    if value < 0.001:
        return f"{value * 1e6:.0f} µs"
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def size(n_bytes: float) -> str:
    return f"{n_bytes / MB:.1f} MB" if n_bytes >= MB else f"{n_bytes / 1000:.0f} kB"


def ratio(ours: float | None, peer: float | None) -> str:
    """How many times the peer's cost ours is: below 1 means ours is cheaper."""
    if ours is None or not peer:
        return "-"
    return f"{ours / peer:.2f}x" if ours < 10 * peer else f"{ours / peer:.0f}x"


def verdict(value: float, goal: float) -> str:
    return "met" if value <= goal else "missed"
