"""Encoding benchmarks: our ``Tokenizer`` beside tiktoken (Rust) and puretiktoken (pure Python).

    .venv/bin/python -m bench.encode                 # cold and warm rows; 5 and 25 MB streamed
    .venv/bin/python -m bench.encode --adversarial   # single runs of 200,000 characters
    .venv/bin/python -m bench.encode --open-models   # Llama, Qwen, DeepSeek, Mistral

``--quick`` makes either a smoke run. Every encoder loads OpenAI's own files, and its ids must
equal tiktoken's before it is timed. The texts: English prose, 5 MB of the standard library's
source, and 5 MB each of C headers, translated manual pages in many languages, and JSON and
logs, built from this machine's files (:mod:`bench.texts`), and the headers again with a
letter above U+FFFF every 8k characters. A cold run starts with a new ``Tokenizer`` or
``Encoding``, built outside the timer, so it feeds on no earlier run's cache; a warm run
encodes the same text again with the same one (the rows other than the prose). tiktoken
keeps no cache and runs on one thread, as the others do. puretiktoken has no gpt2. Streaming:
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
from .texts import c_headers, json_and_logs, many_scripts, with_astral

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


#: Cold goals: ours at most this many times tiktoken's time (o200k_base's split is slower).
GOALS = {"gpt2": 1.5, "cl100k_base": 1.5, "o200k_base": 2.0}
#: Warm goal: a tokenizer that met the text before, at most tiktoken's time.
WARM_GOAL = 1.0


def bench_texts(quick: bool) -> dict[str, str]:
    """The texts of the timed rows: shipped with Python, or found on this machine
    (:mod:`bench.texts`); a text the machine lacks is left out with a note."""
    big = int((0.3 if quick else 5) * MB)
    headers = c_headers(big)
    found = {"English prose": english_prose(100_000 if quick else None),
             "stdlib source": python_source(big),
             "C headers": headers,
             "manual pages, many languages": many_scripts(big),
             "JSON and logs": json_and_logs(big),
             "C headers, a letter above U+FFFF every 8k": with_astral(headers) if headers else ""}
    for label in [label for label, text in found.items() if not text]:
        print(f"note: no files for the row {label!r} on this machine; it is left out")
        del found[label]
    return found


def ordinary_row(name: str, ours: Any, tiktoken: Any, label: str, text: str, repeat: int,
                 warm: bool = False):
    """Check our ids, then time the three encoders on ``text``; None if our ids are wrong.
    Cold: a new tokenizer (and a new puretiktoken ``Encoding``) each run. Warm: one that
    encoded ``text`` before, as a long-lived tokenizer that meets familiar text is."""
    expected = tiktoken.encode(text, allowed_special="all")
    if not check(f"{name} ids == tiktoken's", cold(ours).encode(text), expected, label):
        return None
    setup = lambda: cold(ours)  # noqa: E731
    pure_setup = functools.partial(puretiktoken.Encoding, name)
    if warm:
        tokenizer, encoding = cold(ours), None
        tokenizer.encode(text)
        setup = lambda: tokenizer  # noqa: E731
        if name in puretiktoken.list_encoding_names():
            encoding = puretiktoken.Encoding(name)
            encoding.encode(text, allowed_special="all")
            pure_setup = lambda: encoding  # noqa: E731
    runs = [(lambda tokenizer: tokenizer.encode(text), setup),
            (lambda _: tiktoken.encode(text, allowed_special="all"), lambda: None)]
    if name in puretiktoken.list_encoding_names():
        runs.append((lambda enc: enc.encode(text, allowed_special="all"), pure_setup))
    (mine, ids), (theirs, _), *pure = best_times(repeat, *runs)
    if ids != expected:
        check(f"{name} ids == tiktoken's", ids, expected, f"{label}, warm")
        return None
    peer = pure[0][0] if pure and pure[0][1] == expected else None
    if pure and peer is None:
        print(f"note: puretiktoken's {name} ids differ from tiktoken's on {label}")
    goal = WARM_GOAL if warm else GOALS[name]
    cells = [seconds(mine), seconds(theirs), ratio(mine, theirs), seconds(peer)]
    return [label, size(len(text.encode())), name, *cells, ratio(peer, theirs),
            f"<= {goal}x: {verdict(mine / theirs, goal)}"]


def stream_peak(ours: Any, tiktoken: Any, path: Path) -> tuple[int | None, int, int]:
    """Traced peak of streaming ``path`` through a cold tokenizer (None if an id is wrong),
    the number of ids, and the bytes the piece cache counted for its entries at the end."""
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
    return (peak if same else None), len(expected), tokenizer._pieces.size


def streaming_table(ours: Any, tiktoken: Any, sizes_mb: tuple[float, ...]) -> bool:
    rows, peaks = [], []
    with tempfile.TemporaryDirectory(prefix="bench-encode-") as tmp:
        for mb in sizes_mb:
            path = write_python_source(Path(tmp) / f"stdlib-{mb:g}MB.txt", int(mb * MB))
            peak, count, cached = stream_peak(ours, tiktoken, path)
            if peak is None:
                return False
            peaks.append(peak)
            limit = ours.cache_mb * MB
            goal = verdict(max(peak / (limit + 1.5 * peaks[0]), (peak - limit) / (32 * MB)), 1)
            cells = [size(path.stat().st_size), f"{count:,}", size(peak), size(cached)]
            rows.append([*cells, f"{peak / peaks[0]:.2f}x", goal])
    header = ["file", "ids", "new Python memory at peak", "piece cache, counted",
              "vs smallest file", "goal"]
    table("Streaming (gpt2 encode_iterable over a text file; tracemalloc)", header, rows)
    print(f"\ngoal: flat but for the piece cache, which may fill up to its bound "
          f"({ours.cache_mb:g} MB): at most the bound plus 1.5x the smallest file's peak, "
          "and under 32 MB more than the bound.")
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
    parser.add_argument("--repeat", type=int, default=3, help="runs per cell, best kept")
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
        texts = bench_texts(args.quick)
        rows = [ordinary_row(*encoding, label, text, args.repeat)
                for encoding in found for label, text in texts.items()]
        warm = [ordinary_row(*encoding, label, text, args.repeat, warm=True)
                for encoding in found for label, text in texts.items() if label != "English prose"]
        if not all(rows + warm):
            return 1
        header = ["text", "size", "encoding", "ours", "tiktoken", "ratio", "puretiktoken",
                  "ratio", "goal"]
        table(f"Encoding, cold (a new tokenizer each run; one thread, best of {args.repeat}; "
              "ratios against tiktoken)", header, rows)
        title = (f"Encoding, warm (the same tokenizer, the same text again: piece cache "
                 f"{found[0][1].cache_mb:g} MB; best of {args.repeat})")
        rows = warm
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
