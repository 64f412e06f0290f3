"""Encoding benchmarks: our ``Tokenizer`` beside tiktoken (Rust) and puretiktoken (pure Python).

    .venv/bin/python -m bench.encode                 # prose, 5 MB of code; 5 and 25 MB streamed
    .venv/bin/python -m bench.encode --adversarial   # single runs of 200,000 characters

``--quick`` makes either a smoke run. Every encoder loads OpenAI's own files, and ids must equal
tiktoken's before anything is timed. Each timed run starts cold (a new ``Tokenizer`` or
``Encoding``, built outside the timer), so no run feeds on an earlier run's cache; tiktoken
keeps none and runs on one thread, as the others do. puretiktoken has no gpt2.

Streaming: ``encode_iterable`` over a file should hold a window of it, not all of it; tracemalloc
gives the peak of new Python memory while the ids are checked against tiktoken's one by one.

Adversarial: inside one pretoken BPE merges the lowest-ranked pair again and again; found by a
scan, that is O(n) per merge, so one long pretoken (a ruler line, a long number, a CJK or
whitespace run) costs O(n^2), while tiktoken stays near-linear. Each input is checked short,
then timed long, both through ``encode`` and ``encode_iterable`` (1,024-character chunks),
against tiktoken's ``encode``. A run of ours stops after ``--time-limit`` seconds, or 60x
tiktoken's time if longer (an alarm raises an exception between two bytecodes), so a quadratic
encoder cannot hang the benchmark.
"""

from __future__ import annotations

import argparse
import functools
import random
import signal
import string
import tempfile
import time
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import puretiktoken

from bpe_course.data import english_prose, python_source, write_python_source

from .common import (
    MB,
    best_time,
    check,
    print_load,
    print_machine,
    ratio,
    seconds,
    size,
    table,
    traced_peak,
    verdict,
)

WAYS = ("encode", "encode_iterable")
CASES: dict[str, Callable[[int, random.Random], str]] = {
    '"a" * n': lambda n, rng: "a" * n,
    '"-" * n': lambda n, rng: "-" * n,
    '"1" * n': lambda n, rng: "1" * n,
    '"中" * n': lambda n, rng: "中" * n,
    "random letters": lambda n, rng: "".join(rng.choices(string.ascii_letters, k=n)),
    "random CJK": lambda n, rng: "".join(map(chr, rng.choices(range(0x4E00, 0x9FFF), k=n))),
    "spaces": lambda n, rng: " " * n,
    "newlines": lambda n, rng: "\n" * n,
    "mixed whitespace": lambda n, rng: "".join(rng.choices(" \n\t\r", k=n)),
}


def encodings(names: list[str]) -> list[tuple[str, Any, Any]]:
    """``(name, ours, tiktoken's Encoding)`` for each name ``bpe_course.openai`` can load."""
    from bpe_course import openai

    for name in [name for name in names if not hasattr(openai, name)]:
        print(f"note: bpe_course.openai has no {name}() yet, so its rows are skipped")
    loaded = [name for name in names if hasattr(openai, name)]
    return [(name, getattr(openai, name)(), openai.tiktoken_encoding(name)) for name in loaded]


def cold(tokenizer: Any) -> Any:
    """A new tokenizer with the same vocabulary, merges, specials and pattern: an empty cache."""
    specials = list(tokenizer.special_tokens)
    return type(tokenizer)(tokenizer.vocab, tokenizer.merges, specials, tokenizer.pattern)


def ordinary_row(name: str, ours: Any, tiktoken: Any, label: str, text: str, repeat: int):
    """Check the ids, then time the three encoders on ``text``; None if our ids are wrong."""
    expected = tiktoken.encode(text, allowed_special="all")
    ids = cold(ours).encode(text)
    if not check(f"{name} ids == tiktoken's", ids, expected, label):
        return None
    mine, _ = best_time(lambda tokenizer: tokenizer.encode(text), repeat, lambda: cold(ours))
    theirs, _ = best_time(lambda _: tiktoken.encode(text, allowed_special="all"), repeat)
    peer = None
    if name in puretiktoken.list_encoding_names():
        cold_peer = functools.partial(puretiktoken.Encoding, name)
        peer, ids = best_time(lambda e: e.encode(text, allowed_special="all"), repeat, cold_peer)
        if ids != expected:
            print(f"note: puretiktoken's {name} ids differ from tiktoken's on {label}")
            peer = None
    cells = [seconds(mine), seconds(theirs), ratio(mine, theirs), seconds(peer)]
    cells.append(ratio(peer, theirs))
    return [label, size(len(text.encode())), name, *cells, verdict(mine / theirs, 1.5)]


def stream_row(ours: Any, tiktoken: Any, path: Path) -> tuple[int, list[str]] | None:
    """Traced peak of streaming ``path`` through a cold tokenizer, ids checked as they come."""
    with open(path, encoding="utf-8") as file:  # the newline handling streaming will see
        expected = array("q", tiktoken.encode(file.read(), allowed_special="all"))
    tokenizer = cold(ours)
    name = "gpt2 encode_iterable ids == tiktoken's"
    with open(path, encoding="utf-8") as file:
        stream = tokenizer.encode_iterable(file)
        peak, same = traced_peak(lambda: check(name, stream, expected, path.name))
    return (peak, [size(path.stat().st_size), f"{len(expected):,}", size(peak)]) if same else None


class TimeLimit(BaseException):
    """Raised by the alarm inside our encoder; no ``except Exception`` there can swallow it."""


def within(limit: float, call: Callable[[], Any]) -> tuple[float | None, Any]:
    """``call()``'s wall time and result, or ``(None, None)`` if it ran past ``limit`` seconds."""

    def alarm(signum: int, frame: Any) -> None:
        raise TimeLimit

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        start = time.perf_counter()
        result = call()
        return time.perf_counter() - start, result
    except TimeLimit:
        return None, None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def our_way(tokenizer: Any, way: str, text: str) -> Callable[[], list[int]]:
    """A call that encodes ``text`` one way: whole, or streamed in 1,024-character chunks."""
    if way == "encode":
        return lambda: tokenizer.encode(text)
    chunks = [text[i : i + 1024] for i in range(0, len(text), 1024)]
    return lambda: list(tokenizer.encode_iterable(chunks))


def adversarial_row(name: str, ours: Any, tiktoken: Any, case: str, args: argparse.Namespace):
    """Check a short text both ways, then time tiktoken and both of ours on the long one."""
    short = CASES[case](min(args.n, 2000), random.Random(0))
    expected = tiktoken.encode(short)
    for way in WAYS:
        ids = our_way(cold(ours), way, short)()
        if not check(f"{name} {way} ids == tiktoken's", ids, expected, f"{case}, n={len(short):,}"):
            return None
    text = CASES[case](args.n, random.Random(0))
    theirs, expected = best_time(lambda _: tiktoken.encode(text), args.repeat)
    cells, worst = [case, name, seconds(theirs)], 0.0
    limit = max(args.time_limit, 2 * 30 * theirs)  # so that a run stopped misses the goal
    for way in WAYS:
        best = None
        for _ in range(args.repeat):
            took, ids = within(limit, our_way(cold(ours), way, text))
            if took is None:
                break
            if ids != expected:
                check(f"{name} {way} ids == tiktoken's", ids, expected, f"{case}, n={args.n:,}")
                return None
            best = took if best is None else min(best, took)
            if took > 1:  # one slow run says all there is to say
                break
        if best is None:
            cells += [f"> {seconds(limit)}", f"> {limit / theirs:.0f}x"]
        else:
            cells += [seconds(best), ratio(best, theirs)]
        worst = max(worst, float("inf") if best is None else best / theirs)
    return [*cells, verdict(worst, 30)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.encode", description=__doc__)
    parser.add_argument("--adversarial", action="store_true", help="long single-run inputs")
    parser.add_argument("--quick", action="store_true", help="gpt2 on small inputs")
    parser.add_argument("--repeat", type=int, default=3, help="runs per cell, best kept")
    parser.add_argument("--n", type=int, help="characters per adversarial input (200,000)")
    parser.add_argument("--time-limit", type=float, default=5.0, help="seconds per run of ours "
                        "(at least 60x tiktoken's time, so a stopped run surely misses 30x)")
    args = parser.parse_args(argv)
    args.n = args.n or (2000 if args.quick else 200_000)
    print_machine(["tiktoken", "puretiktoken", "regex"])
    found = encodings(["gpt2"] if args.quick else ["gpt2", "cl100k_base", "o200k_base"])

    if args.adversarial:
        rows = [adversarial_row(*encoding, case, args) for encoding in found for case in CASES]
        header = ["input", "encoding", "tiktoken", "ours: encode", "ratio", "encode_iterable",
                  "ratio", "goal <= 30x"]
        title = f"Adversarial encoding, n = {args.n:,} characters (ours cold; tiktoken 1 thread)"
    else:
        code_mb = 0.3 if args.quick else 5
        texts = {"English prose": english_prose(100_000 if args.quick else None),
                 f"stdlib source {code_mb:g} MB": python_source(int(code_mb * MB))}
        rows = [ordinary_row(*encoding, label, text, args.repeat)
                for encoding in found for label, text in texts.items()]
        header = ["text", "size", "encoding", "ours", "tiktoken", "ratio", "puretiktoken",
                  "ratio", "goal <= 1.5x"]
        title = f"Encoding (cold, one thread, best of {args.repeat}; ratios against tiktoken)"
    if not all(rows):
        return 1
    table(title, header, rows)

    if not args.adversarial:
        peaks, rows = [], []
        with tempfile.TemporaryDirectory(prefix="bench-encode-") as tmp:
            for mb in (0.2, 1) if args.quick else (5, 25):
                path = write_python_source(Path(tmp) / f"stdlib-{mb:g}MB.txt", int(mb * MB))
                streamed = stream_row(*found[0][1:], path)
                if streamed is None:
                    return 1
                peaks.append(streamed[0])
                growth, flat = peaks[-1] / peaks[0], peaks[-1] / peaks[0] <= 1.5
                goal = "met" if flat and peaks[-1] < 32 * MB else "missed"
                rows.append([*streamed[1], f"{growth:.2f}x", goal])
        header = ["file", "ids", "new Python memory at peak", "vs smallest file", "goal"]
        table("Streaming (gpt2 encode_iterable over a text file; tracemalloc)", header, rows)
        print("\ngoal: flat: at most 1.5x the smallest file's peak, and under 32 MB.")
    print_load("end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
