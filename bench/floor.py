"""Where a cold encode's time goes, and the least this design of encoder can take.

    .venv/bin/python -m bench.floor            # OpenAI's three on every text of bench.encode
    .venv/bin/python -m bench.floor --quick    # gpt2 on small texts
    .venv/bin/python -m bench.floor --open-models   # llama3 and qwen2.5 on prose and source

A cold encode does four kinds of work. It *splits* the text into pretokens (``re`` running the
pattern, a span at a time); it *looks up* each pretoken in the piece cache and appends its ids
(a dictionary lookup in C); it *merges* each distinct pretoken that is not spelled like a whole
token, once (Python applying the merges pair by pair); and it *remembers* each new pretoken.
A warm encode, the same tokenizer meeting the same text again, does only the first two. So a
warm encode plus the merges, each timed alone with the tokenizer's own splitter and merger, is
a floor: only the remembering could be made cheaper, and no cache, however clever, brings a
cold encode of this design below that sum.

Each row prints tiktoken's time for the same text and these times as ratios to it, beside the
goal of ``bench.encode``. A row whose floor is above its goal cannot meet it by any change to
how pretokens are remembered; only a faster split or a faster merge (fewer joins, or joins
outside Python) could. Ids are checked against tiktoken's before anything is timed.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from itertools import chain
from typing import Any

from bpe_course.speed.cuts import span_splitter, spans_between_safe_cuts
from bpe_course.tokenizer import CUT_REACH, ENCODE_SPAN

from .common import MB, best_times, check, print_load, print_machine, ratio, seconds, table
from .encode import GOALS, bench_texts, cold, encodings


def pretokens(tokenizer: Any, text: str) -> list[str]:
    """The pretokens of ``text``, found span by span as the tokenizer's own encode finds them."""
    findall = span_splitter(tokenizer._compiled, tokenizer._safe_cuts)
    spans = spans_between_safe_cuts(text, tokenizer._safe_cuts, ENCODE_SPAN, CUT_REACH)
    return list(chain.from_iterable(findall(text, start, end) for start, end in spans))


def to_merge(tokenizer: Any, pieces: list[str]) -> list[str]:
    """The distinct pretokens a cold encode merges: those not spelled like a whole token."""
    whole = tokenizer._pieces.whole
    return [piece for piece in dict.fromkeys(pieces) if piece not in whole]


def floor_row(name: str, warm: Any, fresh: Callable[[], Any], reference: Any, label: str,
              text: str, repeat: int, goal: float) -> list[str] | None:
    """One text: tiktoken's time; our cold encode (``fresh()`` gives a tokenizer with nothing
    remembered), our warm encode (``warm`` meets the text twice before it is timed), the split
    and the merges alone; the floor."""
    expected = reference.encode_ordinary(text)
    if not (check(f"{name} ids == tiktoken's", warm.encode_ordinary(text), expected, label)
            and check(f"{name} ids == tiktoken's", warm.encode_ordinary(text), expected,
                      f"{label}, warm")):
        return None
    pieces = pretokens(warm, text)
    merged = to_merge(warm, pieces)
    merge_piece = warm._pieces.encode_piece
    # The parts timed alone must be the parts of the encode: together they give its ids.
    answers = dict(zip(merged, map(merge_piece, merged)))
    whole = warm._pieces.whole
    alone = [i for piece in pieces for i in answers.get(piece) or (whole[piece],)]
    if not check(f"{name} split and merges alone == tiktoken's", alone, expected, label):
        return None
    timed = best_times(
        repeat,
        (lambda _: reference.encode_ordinary(text), lambda: None),
        (lambda tokenizer: tokenizer.encode_ordinary(text), fresh),
        (lambda _: warm.encode_ordinary(text), lambda: None),
        (lambda _: pretokens(warm, text), lambda: None),
        (lambda _: list(map(merge_piece, merged)), lambda: None),
    )
    theirs, mine, again, split, merging = (best for best, _ in timed)
    floor = again + merging
    return [label, name, f"{len(pieces):,} / {len(merged):,}", seconds(theirs),
            *(ratio(each, theirs) for each in (mine, split, again, merging, floor)), f"{goal}x",
            "yes" if floor <= goal * theirs else "no"]


def open_model_rows(quick: bool, repeat: int) -> list[list[str] | None]:
    """llama3 and qwen2.5 (the open models with a goal against tiktoken), against a bare
    tiktoken ``Encoding`` of the same ranks, on the texts of ``bench.encode --open-models``."""
    from bpe_course.course.data import english_prose, python_source
    from bpe_course.models import open_model

    from .open_models import GOALS as OPEN_GOALS
    from .open_models import bare_tiktoken, emptied

    texts = {"English prose": english_prose(50_000 if quick else None),
             "stdlib source": python_source(int((0.2 if quick else 5) * MB))}
    rows = []
    for name in ["llama3", "qwen2.5"]:
        warm, fresh = open_model(name), functools.partial(emptied, open_model(name))
        for label, text in texts.items():
            rows.append(floor_row(name, warm, fresh, bare_tiktoken(warm), label, text, repeat,
                                  OPEN_GOALS[name]))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.floor", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="gpt2 on small texts")
    parser.add_argument("--repeat", type=int, default=3, help="runs per cell, best kept")
    parser.add_argument("--open-models", action="store_true", help="llama3 and qwen2.5")
    args = parser.parse_args(argv)
    print_machine(["tiktoken", "regex"])
    if args.open_models:
        rows = open_model_rows(args.quick, args.repeat)
    else:
        found = encodings(["gpt2"] if args.quick else ["gpt2", "cl100k_base", "o200k_base"])
        texts = bench_texts(args.quick)
        rows = [floor_row(name, cold(ours), functools.partial(cold, ours), reference, label, text,
                          args.repeat, GOALS[name])
                for name, ours, reference in found for label, text in texts.items()]
    if not all(rows):
        return 1
    header = ["text", "encoding", "pretokens / merged", "tiktoken", "cold encode", "split",
              "warm encode", "merges", "floor", "goal", "floor within goal"]
    table(f"Where a cold encode goes (one thread, best of {args.repeat}; times as ratios to "
          "tiktoken's; floor = warm encode + merges)", header, rows)
    print_load("end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
