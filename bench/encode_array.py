"""Encoding a corpus into a .npy array of ids: ``encode_to_array`` against tiktoken.

    .venv/bin/python -m bench.encode_array            # 8 MB of English and Python source
    .venv/bin/python -m bench.encode_array --quick    # 1 MB

The peer is what a nanoGPT-style ``prepare.py`` does with tiktoken: read each file whole,
``encode_ordinary`` it (tiktoken's Rust), append the end-of-text id, and write the ids with
NumPy. Ours reads in blocks, encodes a batch at a time on 1 process and on every core, and
writes the same file atomically. The gate: both files hold the same ids. Times are the best
of ``--repeat`` runs taken in turns; compare the ratios, and the load average says how busy
the machine was.
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np
import tiktoken

from bpe_course.course.data import english_prose, python_source
from bpe_course.formats.arrays import encode_to_array
from bpe_course.openai import BY_NAME, tiktoken_encoding

from .common import MB, best_times, check, print_load, print_machine, ratio, seconds, table


def tiktoken_prepare(encoding: tiktoken.Encoding, paths: list[str], output: str) -> int:
    """The peer: whole files through tiktoken, ids saved with NumPy."""
    ids: list[int] = []
    for path in paths:
        with open(path, encoding="utf-8") as file:
            ids.extend(encoding.encode_ordinary(file.read()))
        ids.append(encoding.eot_token)
    dtype = np.uint16 if encoding.max_token_value < 1 << 16 else np.uint32
    np.save(output, np.array(ids, dtype=dtype))
    return len(ids)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.encode_array", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="1 MB instead of 8 MB")
    parser.add_argument("--repeat", type=int, default=3, help="runs per side (best kept)")
    args = parser.parse_args(argv)
    print_machine(["tiktoken", "numpy"])
    total = MB if args.quick else 8 * MB
    folder = tempfile.mkdtemp(prefix="bench-encode-array-")
    paths = [os.path.join(folder, "english.txt"), os.path.join(folder, "python.txt")]
    prose = english_prose(total // 4)  # at most what the prose holds (about 470 kB)
    with open(paths[0], "w", encoding="utf-8") as file:
        file.write(prose)
    with open(paths[1], "w", encoding="utf-8") as file:
        file.write(python_source(total - len(prose.encode())))
    text_bytes = sum(os.path.getsize(path) for path in paths)
    rows, passed = [], True
    for name in ["gpt2", "o200k_base"]:
        ours, peer = BY_NAME[name](), tiktoken_encoding(name)
        out = {side: os.path.join(folder, f"{name}-{side}.npy") for side in ("1", "all", "tt")}
        (one, _), (every, result), (theirs, _) = best_times(
            args.repeat,
            (lambda _, t=ours, o=out: encode_to_array(t, paths, o["1"], num_processes=1),
             lambda: None),
            (lambda _, t=ours, o=out: encode_to_array(t, paths, o["all"]), lambda: None),
            (lambda _, t=peer, o=out: tiktoken_prepare(t, paths, o["tt"]), lambda: None),
        )
        expected = np.load(out["tt"]).tolist()
        for side in ("1", "all"):
            passed &= check(f"{name}: encode_to_array == tiktoken + np.save",
                            np.load(out[side]).tolist(), expected, f"{side} process(es)")
        def speed(seconds_taken: float, tokens: int = result.tokens) -> str:
            return (f"{seconds(seconds_taken)}: {text_bytes / seconds_taken / MB:.1f} MB/s, "
                    f"{tokens / seconds_taken:,.0f} tokens/s")

        rows.append([name, f"{text_bytes / MB:.1f} MB", f"{result.tokens:,}", result.dtype,
                     speed(one), speed(every), speed(theirs),
                     f"{ratio(one, theirs)} / {ratio(every, theirs)}"])
    table("encode a corpus to .npy", ["tokenizer", "text", "tokens", "dtype", "ours, 1 process",
          "ours, every core", "tiktoken + np.save", "time vs tiktoken (1 / every core)"], rows)
    print_load("end")
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
