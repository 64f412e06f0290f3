"""Loading a rank file: our ``load_tiktoken_file`` beside tiktoken's loader, time and memory.

    .venv/bin/python -m bench.load          # o200k_base, tables of 0.5, 1 and 2 million tokens
    .venv/bin/python -m bench.load --quick  # o200k_base and 100,000 tokens
    .venv/bin/python -m bench.load --startup  # start-up: import, build, first encode (below)

A table of N tokens is made the way a BPE trainer leaves one: the 256 bytes, every pair of
bytes, then three-byte tokens (each a pair and a byte) in rank order; 2 million tokens are a
25 MB file. Each load runs in a process of its own, so its peak RSS is its alone. tiktoken's
side is ``load_tiktoken_bpe`` and ``tiktoken.Encoding``; ours builds the merges back from the
ranks too, which tiktoken never needs (with the start-up cache off: the build from the file
that a first start pays). Before anything is timed, the two must encode the same text to the
same ids. Goal: loading grows linearly, so the time and the peak memory per
token of the largest table are at most 1.5x those of the smallest.

``--startup`` (:mod:`bench.startup`) times what a program pays before its first ids: a fresh
process imports the library, builds the tokenizer and encodes a sample, beside tiktoken and
puretiktoken, and each open model beside its publisher's library.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import check, peak_rss, print_load, print_machine, ratio, seconds, table, verdict

SIZES = (500_000, 1_000_000, 2_000_000)
QUICK_SIZES = (100_000,)
#: What both sides encode before they are timed.
SAMPLE = "Hello, world! Loading two million tokens, in 3 lines:\n\tdef f(x): return x ** 2\n"


def write_table(path: Path, tokens: int) -> Path:
    """A rank file of ``tokens`` tokens that BPE could have learned (see the module's doc)."""
    rng = random.Random(tokens)
    lines = [bytes([byte]) for byte in range(256)]
    lines += [bytes([a, b]) for a in range(256) for b in range(256)][: tokens - 256]
    seen = set(lines)
    while len(lines) < tokens:
        token = rng.getrandbits(24).to_bytes(3, "big")
        if token not in seen:
            seen.add(token)
            lines.append(token)
    with open(path, "w", encoding="ascii") as file:
        file.writelines(f"{base64.b64encode(t).decode()} {rank}\n" for rank, t in enumerate(lines))
    return path


def load(side: str, table_path: str) -> dict:
    """One load (in a child process): its wall and CPU seconds, peak RSS and sample ids."""
    from bpe_course.pretokens import GPT2_PATTERN

    start, cpu = time.perf_counter(), time.process_time()
    if side == "ours":
        from bpe_course import openai

        encoding = (openai.o200k_base() if table_path == "o200k_base"
                    else openai.load_tiktoken_file(table_path, GPT2_PATTERN))
        encode = encoding.encode_ordinary
    else:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe

        from bpe_course.openai import tiktoken_encoding

        encoding = (tiktoken_encoding("o200k_base") if table_path == "o200k_base" else
                    tiktoken.Encoding("table", pat_str=GPT2_PATTERN, special_tokens={},
                                      mergeable_ranks=load_tiktoken_bpe(table_path)))
        encode = encoding.encode_ordinary
    # VmHWM, not ru_maxrss: that one keeps the parent's peak across fork and exec.
    done = {"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu,
            "peak": peak_rss()[0]}
    return done | {"ids": encode(SAMPLE)}


def measured(side: str, table_path: str, repeat: int) -> dict:
    """The best of ``repeat`` loads, each in a new process (the peak RSS is the same each time)."""
    runs = []
    for _ in range(max(1, repeat)):
        child = subprocess.run([sys.executable, "-m", "bench.load", "--child", side, table_path],
                               capture_output=True, text=True, check=True,
                               cwd=Path(__file__).resolve().parent.parent,
                               env=dict(os.environ, BPE_COURSE_CACHE="off"))  # from the file
        runs.append(json.loads(child.stdout))
    return min(runs, key=lambda run: run["cpu"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="o200k_base and 100,000 tokens")
    parser.add_argument("--repeat", type=int, help="loads per side, best kept (2; 5 for --startup)")
    parser.add_argument("--startup", action="store_true",
                        help="start-up: import + build + first encode, fresh process each")
    parser.add_argument("--child", nargs=2, metavar=("SIDE", "TABLE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.startup:
        from .startup import run

        return run(args.quick, args.repeat or 5)
    if args.child:
        print(json.dumps(load(*args.child)))
        return 0
    print_machine(["tiktoken"])
    rows, per_token, ok = [], [], True
    with tempfile.TemporaryDirectory() as folder:
        tables = [("o200k_base", "o200k_base", 200_000)]
        for tokens in QUICK_SIZES if args.quick else SIZES:
            path = write_table(Path(folder) / f"{tokens}.tiktoken", tokens)
            tables.append((f"{tokens:,} tokens, {path.stat().st_size / 1e6:.0f} MB", str(path),
                           tokens))
        for label, path, tokens in tables:
            ours, theirs = (measured(side, path, args.repeat or 2) for side in ("ours", "tiktoken"))
            ok &= check("ids == tiktoken's", ours["ids"], theirs["ids"], label)
            if path != "o200k_base":
                per_token.append((ours["cpu"] / tokens, ours["peak"] / tokens))
            rows.append([label, seconds(ours["cpu"]), seconds(theirs["cpu"]),
                         ratio(ours["cpu"], theirs["cpu"]), f"{ours['peak'] / 2**20:.0f} MB",
                         f"{theirs['peak'] / 2**20:.0f} MB", ratio(ours["peak"], theirs["peak"])])
    if not ok:
        return 1
    table("Loading a rank file (CPU time, best of runs; peak RSS of the process)",
          ["table", "ours", "tiktoken", "ratio", "ours peak", "tiktoken peak", "ratio"], rows)
    growth = max(last / first for first, last in zip(per_token[0], per_token[-1]))
    print(f"\ngrowth per token, largest table against smallest: {growth:.2f}x "
          f"(goal <= 1.5x): {verdict(growth, 1.5)}")
    print_load("end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
