"""Encoding benchmarks: our ``Tokenizer`` beside tiktoken (Rust) and puretiktoken (pure Python).

    .venv/bin/python -m bench.encode                 # prose, 5 MB of code; 5 and 25 MB streamed
    .venv/bin/python -m bench.encode --adversarial   # single runs of 200,000 characters
    .venv/bin/python -m bench.encode --open-models   # Llama, Qwen, DeepSeek, Mistral

``--quick`` makes either a smoke run. Every encoder loads OpenAI's own files, and its ids must
equal tiktoken's before it is timed. Each timed run starts cold (a new ``Tokenizer`` or
``Encoding``, built outside the timer), so no run feeds on an earlier run's cache; tiktoken
keeps none and runs on one thread, as the others do. puretiktoken has no gpt2. Streaming:
``encode_iterable`` over a file should hold a window of it, not all of it; tracemalloc gives the
peak of new Python memory while the ids are checked against tiktoken's one by one.

Adversarial: inside one pretoken BPE merges the lowest-ranked pair again and again. Found by a
scan, that costs O(n) per merge, so one long pretoken (a ruler line, a long number, a run of CJK
or whitespace) costs O(n^2), while tiktoken stays near-linear. Each input is checked short, then
timed long, through ``encode`` and ``encode_iterable`` (1,024-character chunks), against
tiktoken's ``encode``. A run of ours stops after ``--time-limit`` seconds or 60x tiktoken's time
(an alarm raises an exception between two bytecodes), so a quadratic encoder cannot hang us.
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
from itertools import zip_longest
from pathlib import Path
from typing import Any

import puretiktoken

from bpe_course.course.data import english_prose, python_source, write_python_source

from .common import (
    MB,
    best_times,
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
    """``(name, ours, tiktoken's Encoding)`` for each name, both from the same local files."""
    from bpe_course.openai import BY_NAME, tiktoken_encoding

    return [(name, BY_NAME[name](), tiktoken_encoding(name)) for name in names]


def cold(tokenizer: Any) -> Any:
    """A new tokenizer with the same vocabulary, merges, specials and pattern: an empty cache."""
    vocab, merges, specials = tokenizer.vocab, tokenizer.merges, list(tokenizer.special_tokens)
    return type(tokenizer)(vocab, merges, specials, tokenizer.pattern, name=tokenizer.name)


def ordinary_row(name: str, ours: Any, tiktoken: Any, label: str, text: str, repeat: int):
    """Check our ids, then time the three encoders on ``text``; None if our ids are wrong."""
    expected = tiktoken.encode(text, allowed_special="all")
    if not check(f"{name} ids == tiktoken's", cold(ours).encode(text), expected, label):
        return None
    runs = [(lambda tokenizer: tokenizer.encode(text), lambda: cold(ours)),
            (lambda _: tiktoken.encode(text, allowed_special="all"), lambda: None)]
    if name in puretiktoken.list_encoding_names():  # a cold Encoding each run, too
        runs.append((lambda enc: enc.encode(text, allowed_special="all"),
                     functools.partial(puretiktoken.Encoding, name)))
    (mine, _), (theirs, _), *pure = best_times(repeat, *runs)
    peer = pure[0][0] if pure and pure[0][1] == expected else None
    if pure and peer is None:
        print(f"note: puretiktoken's {name} ids differ from tiktoken's on {label}")
    cells = [seconds(mine), seconds(theirs), ratio(mine, theirs), seconds(peer)]
    return [label, size(len(text.encode())), name, *cells, ratio(peer, theirs),
            verdict(mine / theirs, 1.5)]


def stream_peak(ours: Any, tiktoken: Any, path: Path) -> tuple[int | None, int]:
    """Traced peak of streaming ``path`` through a cold tokenizer (None if an id is wrong)."""
    with open(path, encoding="utf-8") as file:  # the newline handling streaming will see
        expected = array("q", tiktoken.encode(file.read(), allowed_special="all"))
    tokenizer = cold(ours)
    with open(path, encoding="utf-8") as file:  # ids compared as they come, never stored
        pairs = zip_longest(tokenizer.encode_iterable(file), expected)
        peak, same = traced_peak(lambda: all(a == b for a, b in pairs))
    streamed = expected
    if not same:  # to say where they part: a stored run, outside the measurement
        with open(path, encoding="utf-8") as file:
            streamed = list(cold(ours).encode_iterable(file))
    same = check("gpt2 encode_iterable ids == tiktoken's", streamed, expected, path.name)
    return (peak if same else None), len(expected)


def streaming_table(ours: Any, tiktoken: Any, sizes_mb: tuple[float, ...]) -> bool:
    rows, peaks = [], []
    with tempfile.TemporaryDirectory(prefix="bench-encode-") as tmp:
        for mb in sizes_mb:
            path = write_python_source(Path(tmp) / f"stdlib-{mb:g}MB.txt", int(mb * MB))
            peak, count = stream_peak(ours, tiktoken, path)
            if peak is None:
                return False
            peaks.append(peak)
            goal = verdict(max(peak / peaks[0] / 1.5, peak / (32 * MB)), 1)
            cells = [size(path.stat().st_size), f"{count:,}", size(peak)]
            rows.append([*cells, f"{peak / peaks[0]:.2f}x", goal])
    header = ["file", "ids", "new Python memory at peak", "vs smallest file", "goal"]
    table("Streaming (gpt2 encode_iterable over a text file; tracemalloc)", header, rows)
    print("\ngoal: flat: at most 1.5x the smallest file's peak, and under 32 MB.")
    return True


class TimeLimit(BaseException):
    """Raised by the alarm inside our encoder; no ``except Exception`` there can swallow it."""


def stop(signum: int, frame: Any) -> None:
    raise TimeLimit


def best_within(limit: float, repeat: int, make_call: Callable[[], Callable[[], Any]]):
    """Best time of up to ``repeat`` runs of a fresh ``make_call()`` (built outside the timer)
    and the result, each run stopped after ``limit`` seconds; ``(None, None)`` if the first is."""
    best, result, previous = None, None, signal.signal(signal.SIGALRM, stop)
    try:
        for _ in range(repeat):
            call = make_call()
            signal.setitimer(signal.ITIMER_REAL, limit)
            start = time.perf_counter()
            result = call()
            took = time.perf_counter() - start
            signal.setitimer(signal.ITIMER_REAL, 0)
            best = took if best is None else min(best, took)
            if took > 1:  # one slow run says all there is to say
                break
    except TimeLimit:
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return best, result


def our_way(ours: Any, way: str, text: str) -> Callable[[], list[int]]:
    """A call that encodes ``text`` with a cold tokenizer: whole, or in 1,024-character chunks."""
    tokenizer = cold(ours)
    if way == "encode":
        return lambda: tokenizer.encode(text)
    chunks = [text[i : i + 1024] for i in range(0, len(text), 1024)]
    return lambda: list(tokenizer.encode_iterable(chunks))


def adversarial_row(name: str, ours: Any, tiktoken: Any, case: str, n: int, args: Any):
    """Time tiktoken and both of our ways on one input; None if our ids are wrong."""
    text = CASES[case](n, random.Random(0))
    [(theirs, expected)] = best_times(args.repeat, (lambda _: tiktoken.encode(text), lambda: None))
    limit = max(args.time_limit, 60 * theirs)  # so that a run which is stopped misses 30x
    cells, worst = [case, name, seconds(theirs)], 0.0
    for way in WAYS:
        best, ids = best_within(limit, args.repeat, functools.partial(our_way, ours, way, text))
        if best is None:
            cells, worst = [*cells, f"> {seconds(limit)}", f"> {limit / theirs:.0f}x"], 1e9
        elif not check(f"{name} {way} ids == tiktoken's", ids, expected, f"{case}, n={n:,}"):
            return None
        else:
            cells, worst = [*cells, seconds(best), ratio(best, theirs)], max(worst, best / theirs)
    return [*cells, verdict(worst, 30)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.encode", description=__doc__)
    parser.add_argument("--adversarial", action="store_true", help="long single-run inputs")
    parser.add_argument("--quick", action="store_true", help="gpt2 on small inputs")
    parser.add_argument("--repeat", type=int, default=5, help="runs per cell, best kept")
    parser.add_argument("--n", type=int, help="characters per adversarial input (200,000)")
    parser.add_argument("--time-limit", type=float, default=5.0, help="per run of ours")
    parser.add_argument("--open-models", action="store_true",
                        help="open models' tokenizers beside their publishers' libraries")
    args = parser.parse_args(argv)
    args.n = args.n or (2000 if args.quick else 200_000)
    print_machine(["tiktoken", "puretiktoken", "regex"])
    if args.open_models:
        from .open_models import run

        status = run(args.quick, args.repeat)
        print_load("end")
        return status
    found = encodings(["gpt2"] if args.quick else ["gpt2", "cl100k_base", "o200k_base"])

    if args.adversarial:
        rows = []
        for encoding in found:
            for case in CASES:  # short first: a gate before any long run
                short = adversarial_row(*encoding, case, min(args.n, 2000), args)
                rows.append(short and adversarial_row(*encoding, case, args.n, args))
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
    sizes = (0.2, 1) if args.quick else (5, 25)
    if not args.adversarial and not streaming_table(*found[0][1:], sizes):
        return 1
    print_load("end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
