"""Training benchmark: ``train_bpe`` beside Hugging Face ``tokenizers`` on the same files.

    .venv/bin/python -m bench.train              # the goals: 10 MB and 30 MB, vocab 10,000
    .venv/bin/python -m bench.train --quick      # a smoke run in seconds
    .venv/bin/python -m bench.train --profile    # where our time goes on the 10 MB corpus

What is compared, and why it is fair:

- Both trainers read the same file, both use every core (ours: ``num_processes=None``, a
  process per core; Hugging Face: a Rayon thread per core), and both split with GPT-2's
  pattern (``ByteLevel``'s default regex is GPT-2's).
- Large corpora run in a *fresh process per trainer*, so we also get each one's peak RSS
  and nothing one run allocated can help or hurt the next. Only the training call is timed.
- The small corpus (CS336's ``corpus.en``) runs in this process, a few times, best time.

One difference stays: Hugging Face does not cut the text at ``<|endoftext|>`` before
training (it adds special tokens to the vocabulary only), so it counts ``<|``/``endoftext``
pieces that we skip: one per source file, a few thousand pretokens out of millions.

Before anything is timed, two checks make sure we time a *correct* trainer: ``train_bpe``
must learn the same merges as ``train_bpe_naive``, and CS336's 243 reference merges.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .common import (
    CS336_DIR,
    MB,
    Goal,
    Row,
    cpu_seconds,
    current_rss_kb,
    format_bytes,
    format_seconds,
    kib_to_bytes,
    parse_sizes,
    peak_rss_report,
    print_goals,
    print_machine,
    print_table,
    run_child,
    time_runs,
    write_source_file,
)

ENDOFTEXT = "<|endoftext|>"

#: The speed goals: our time divided by Hugging Face's, at most.
LARGE_GOAL = 2.0
SMALL_GOAL = 4.0

#: Peak RSS may grow at most this fraction as fast as the file: with 10 MB and 30 MB (3x)
#: the peak may grow 2x. Memory can't stay flat, since the table of distinct pretokens
#: (which every exact trainer needs) keeps growing, but it must not grow like the text.
MEMORY_GROWTH_GOAL = 0.5

#: Hugging Face counts as having trained the asked-for vocabulary within this fraction.
VOCAB_TOLERANCE = 0.01


# The two trainers ----------------------------------------------------------------------------


def hf_tokenizer_and_trainer(vocab_size: int) -> tuple[Any, Any]:
    """A Hugging Face byte-level BPE set up like ours: GPT-2's split, all 256 bytes first."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[ENDOFTEXT],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    return tokenizer, trainer


def train_ours(path: str, vocab_size: int) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    from bpe_course import train_bpe

    return train_bpe(path, vocab_size, [ENDOFTEXT], num_processes=None)


def train_hf(tokenizer_and_trainer: tuple[Any, Any], path: str) -> int:
    """Train in place and return the vocabulary size Hugging Face ended up with."""
    tokenizer, trainer = tokenizer_and_trainer
    tokenizer.train([path], trainer)
    return tokenizer.get_vocab_size()


def run_in_child(which: str, path: str, vocab_size: int) -> dict[str, Any]:
    """The body of a fresh child process: train once, report time, vocab size and peak RSS.

    CPU time divided by wall time says how many cores a trainer really kept busy.
    """
    if which == "hf":
        setup = hf_tokenizer_and_trainer(vocab_size)
    else:
        import bpe_course  # noqa: F401  (imports are not part of the timed call)
    baseline_kb = current_rss_kb()
    cpu_start = cpu_seconds()
    start = time.perf_counter()
    if which == "hf":
        trained_size = train_hf(setup, path)
    else:
        trained_size = len(train_ours(path, vocab_size)[0])
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "cpu_seconds": cpu_seconds() - cpu_start,
        "vocab_size": trained_size,
        "baseline_kb": baseline_kb,
        **peak_rss_report(),
    }


# Checks -------------------------------------------------------------------------------------


def check_against_naive(folder: Path, n_bytes: int, vocab_size: int) -> Goal:
    """``train_bpe`` and ``train_bpe_naive`` must agree merge for merge."""
    from bpe_course import train_bpe, train_bpe_naive

    path = write_source_file(folder / "naive-check.txt", n_bytes)
    fast = train_bpe(path, vocab_size, [ENDOFTEXT])
    slow = train_bpe_naive(path, vocab_size, [ENDOFTEXT])
    name = "train_bpe == train_bpe_naive"
    where = f"{format_bytes(n_bytes)} of stdlib source, vocab {vocab_size}"
    if fast == slow:
        return Goal(name, True, f"{len(fast[1])} identical merges ({where})", check=True)
    first = next(
        (i for i, (a, b) in enumerate(zip(fast[1], slow[1])) if a != b),
        min(len(fast[1]), len(slow[1])),
    )
    return Goal(name, False, f"merges differ from merge {first} ({where})", check=True)


def check_cs336_reference() -> Goal:
    """CS336's 243 merges for ``corpus.en`` at vocab 500, when ``../shared`` is there."""
    from bpe_course import train_bpe
    from bpe_course.files import read_merges_txt

    name = "CS336 reference merges"
    corpus, reference = CS336_DIR / "corpus.en", CS336_DIR / "train-bpe-reference-merges.txt"
    if not (corpus.is_file() and reference.is_file()):
        return Goal(name, None, f"no reference files in {CS336_DIR}", check=True)
    expected = read_merges_txt(reference)
    _, merges = train_bpe(corpus, 500, [ENDOFTEXT])
    if merges == expected:
        return Goal(name, True, f"all {len(expected)} reproduced", check=True)
    same = next(
        (i for i, (a, b) in enumerate(zip(merges, expected)) if a != b),
        min(len(merges), len(expected)),
    )
    return Goal(name, False, f"first {same} of {len(expected)} match, then they differ", True)


#: (trainer and corpus, vocabulary size reached, size asked for), one per training run.
TrainedSizes = list[tuple[str, int, int]]


def vocab_check(trained: TrainedSizes) -> Goal:
    """Both trainers must reach the asked vocabulary; a short one would look fast."""
    wrong = [
        f"{label} has {size}, asked {asked}"
        for label, size, asked in trained
        if abs(size - asked) > VOCAB_TOLERANCE * asked
    ]
    sizes = ", ".join(f"{label} {size}" for label, size, _ in trained)
    return Goal("vocabulary sizes reached", not wrong, "; ".join(wrong) or sizes, check=True)


# Rows ---------------------------------------------------------------------------------------


def small_corpus_row(repeat: int, goals: list[Goal], trained: TrainedSizes) -> Row | None:
    """CS336's ``corpus.en`` at vocab 500, both trainers in this process, best of ``repeat``."""
    corpus = CS336_DIR / "corpus.en"
    if not corpus.is_file():
        print(f"note: skipping the corpus.en row: {corpus} is missing (a fresh clone has none)")
        goals.append(Goal(f"train corpus.en: ours <= {SMALL_GOAL:g}x HF", None, "no corpus.en"))
        return None
    path = str(corpus)
    ours, (vocab, _) = time_runs(lambda _: train_ours(path, 500), repeat)
    hf, hf_size = time_runs(
        lambda setup: train_hf(setup, path), repeat, setup=lambda: hf_tokenizer_and_trainer(500)
    )
    trained += [("ours corpus.en", len(vocab), 500), ("HF corpus.en", hf_size, 500)]
    row = Row("corpus.en", corpus.stat().st_size, "500", ours.best, hf.best, "HF")
    goals.append(
        Goal(
            f"train corpus.en: ours <= {SMALL_GOAL:g}x HF",
            row.ratio is not None and row.ratio <= SMALL_GOAL,
            f"{row.ratio:.2f}x (best of {repeat}: {format_seconds(ours.best)} vs "
            f"{format_seconds(hf.best)}; medians {format_seconds(ours.median)} vs "
            f"{format_seconds(hf.median)})",
        )
    )
    return row


def format_rss(report: dict[str, Any]) -> str:
    """``main / largest worker`` peak RSS, e.g. ``"95 MB / 120 MB"``."""
    main = format_bytes(kib_to_bytes(report["main_peak_kb"]))
    workers = report.get("worker_peak_kb")
    if workers is None:
        return main
    return f"{main} / {format_bytes(kib_to_bytes(workers)) if workers else 'none'}"


Report = dict[str, Any]


def combine_runs(reports: list[Report]) -> Report:
    """The fastest run's report, with the highest peaks seen in any run."""
    combined = dict(min(reports, key=lambda report: report["seconds"]))
    for key in ("main_peak_kb", "worker_peak_kb"):
        values = [report[key] for report in reports if report[key] is not None]
        combined[key] = max(values) if values else None
    return combined


def large_rows(
    folder: Path, sizes_mb: list[float], vocab_size: int, repeat: int, trained: TrainedSizes
) -> list[tuple[Row, Report, Report]]:
    """Each size in a fresh process per trainer and run: time of the call plus peak RSS.

    With ``repeat`` above 1 the two trainers take turns, and each keeps its fastest run
    and its highest peak.
    """
    results = []
    for size_mb in sizes_mb:
        n_bytes = int(size_mb * MB)
        path = write_source_file(folder / f"stdlib-{size_mb:g}MB.txt", n_bytes)
        args = ["--path", str(path), "--vocab", str(vocab_size)]
        runs: dict[str, list[Report]] = {"ours": [], "hf": []}
        for _ in range(max(1, repeat)):
            for which, reports in runs.items():
                reports.append(run_child("bench.train", ["--child", which, *args]))
        ours, hf = combine_runs(runs["ours"]), combine_runs(runs["hf"])
        for who, report in (("ours", ours), ("HF", hf)):
            trained.append((f"{who} {size_mb:g} MB", report["vocab_size"], vocab_size))
        row = Row(
            f"stdlib {size_mb:g} MB",
            n_bytes,
            str(vocab_size),
            ours["seconds"],
            hf["seconds"],
            "HF",
            format_rss(ours),
            format_bytes(kib_to_bytes(hf["main_peak_kb"])),
        )
        results.append((row, ours, hf))
    return results


def large_goals(
    results: list[tuple[Row, Report, Report]], vocab_size: int, quick: bool
) -> list[Goal]:
    """The 2x speed goal (at 10 MB when that size ran) and the memory-growth goal."""
    goals = []
    if not results:
        return goals
    row = next((row for row, _, _ in results if row.size == 10 * MB), results[0][0])
    note = " (quick run: the goal is set for 10 MB, vocab 10000)" if quick else ""
    goals.append(
        Goal(
            f"train {format_bytes(row.size)}, vocab {vocab_size}: ours <= {LARGE_GOAL:g}x HF",
            row.ratio is not None and row.ratio <= LARGE_GOAL,
            f"{row.ratio:.2f}x ({format_seconds(row.ours)} vs {format_seconds(row.peer)}){note}",
        )
    )
    if len(results) >= 2:
        goals.append(memory_goal(results[0], results[-1]))
    return goals


def memory_goal(small: tuple[Row, Report, Report], large: tuple[Row, Report, Report]) -> Goal:
    """Peak RSS from the smallest to the largest size must grow well slower than the file."""
    (small_row, small_ours, small_hf), (large_row, large_ours, large_hf) = small, large
    file_growth = large_row.size / small_row.size
    allowed = 1 + MEMORY_GROWTH_GOAL * (file_growth - 1)
    main_growth = large_ours["main_peak_kb"] / small_ours["main_peak_kb"]
    hf_growth = large_hf["main_peak_kb"] / small_hf["main_peak_kb"]
    passed = main_growth <= allowed
    detail = (
        f"file grew {file_growth:.1f}x, our main process's peak RSS {main_growth:.2f}x "
        f"({format_rss(small_ours)} -> {format_rss(large_ours)} main / largest worker, "
        f"{format_bytes(kib_to_bytes(small_ours['baseline_kb']))} of it after imports)"
    )
    small_workers, large_workers = small_ours["worker_peak_kb"], large_ours["worker_peak_kb"]
    if small_workers and large_workers:
        detail += f", largest worker {large_workers / small_workers:.2f}x"
        passed = passed and large_workers / small_workers <= allowed
    detail += f"; HF's peak RSS {hf_growth:.2f}x"
    name = (
        f"memory: peak RSS grows <= {allowed:.1f}x from {format_bytes(small_row.size)} "
        f"to {format_bytes(large_row.size)}"
    )
    return Goal(name, passed, detail)


# Profile ------------------------------------------------------------------------------------


def profile_training(folder: Path, size_mb: float, vocab_size: int, top: int = 15) -> None:
    """Split our time into pretokenizing and merging, then cProfile the whole call.

    cProfile cannot see inside worker processes, so the profiled run counts pretokens in
    this process (``num_processes=1``); the wall-clock split above it uses every core.
    """
    from bpe_course import train_bpe, train_from_counts
    from bpe_course.chunks import count_file_pretokens
    from bpe_course.pretokenize import GPT2_PATTERN

    path = write_source_file(folder / f"stdlib-{size_mb:g}MB.txt", int(size_mb * MB))
    print(f"\nProfile of train_bpe on {size_mb:g} MB of stdlib source, vocab {vocab_size}")
    start = time.perf_counter()
    counts = count_file_pretokens([str(path)], [ENDOFTEXT], GPT2_PATTERN, num_processes=None)
    counted = time.perf_counter()
    train_from_counts(counts, vocab_size, [ENDOFTEXT])
    merged = time.perf_counter()
    print(
        f"wall clock, all cores: pretokenize {format_seconds(counted - start)} "
        f"({len(counts):,} distinct pretokens), merge loop {format_seconds(merged - counted)}"
    )

    profiler = cProfile.Profile()
    profiler.runcall(train_bpe, path, vocab_size, [ENDOFTEXT], num_processes=1)
    stats = pstats.Stats(profiler).strip_dirs()
    phases = {"count_file_pretokens": "pretokenize", "train_from_counts": "merge loop"}
    found = {
        phases[name]: cumulative
        for (_, _, name), (_, _, _, cumulative, _) in stats.stats.items()  # type: ignore[attr-defined]
        if name in phases
    }
    total = stats.total_tt  # type: ignore[attr-defined]
    split = ", ".join(f"{phase} {format_seconds(seconds)}" for phase, seconds in found.items())
    print(f"cProfile, one process: total {format_seconds(total)}: {split}")
    stats.sort_stats("tottime").print_stats(top)


# Command line -------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    summary = __doc__.split("\n")[0]
    parser = argparse.ArgumentParser(prog="python -m bench.train", description=summary)
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument("--sizes", help="stdlib-source sizes in MB (default 10,30; quick 1,3)")
    parser.add_argument("--vocab", type=int, help="vocab size of those rows (default 10000)")
    parser.add_argument("--repeat", type=int, help="runs of the corpus.en row (default 5)")
    parser.add_argument(
        "--large-repeat", type=int, default=1, help="runs of each stdlib row (default 1)"
    )
    parser.add_argument("--profile", action="store_true", help="profile ours on the first size")
    parser.add_argument("--child", choices=["ours", "hf"], help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        args.sizes = parse_sizes(args.sizes or ("1,3" if args.quick else "10,30"))
    except ValueError as error:
        parser.error(str(error))
    args.vocab = args.vocab or (2000 if args.quick else 10000)
    args.repeat = args.repeat or (2 if args.quick else 5)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        print(json.dumps(run_in_child(args.child, args.path, args.vocab)))
        return 0
    print_machine(["tokenizers", "regex"])
    with tempfile.TemporaryDirectory(prefix="bench-train-") as tmp:
        folder = Path(tmp)
        if args.profile:
            profile_training(folder, args.sizes[0], args.vocab)
            return 0
        naive_bytes = 10_000 if args.quick else 30_000
        goals = [check_against_naive(folder, naive_bytes, 400), check_cs336_reference()]
        if any(goal.passed is False for goal in goals):
            print("\nA correctness check failed, so timing this trainer would mean nothing.")
            return print_goals(goals)
        try:
            import tokenizers  # noqa: F401
        except ImportError:
            print("Hugging Face tokenizers is not installed: pip install tokenizers")
            return print_goals(goals) or 2
        rows = []
        trained: TrainedSizes = []
        if small := small_corpus_row(args.repeat, goals, trained):
            rows.append(small)
        results = large_rows(folder, args.sizes, args.vocab, args.large_repeat, trained)
        goals.insert(2, vocab_check(trained))
        rows += [row for row, _, _ in results]
    print_table("Training (ours: train_bpe, all cores; HF: tokenizers BpeTrainer)", rows)
    print(
        "times: only the training call; corpus.en: best of "
        f"{args.repeat} in this process; stdlib rows: best of {args.large_repeat}, "
        "each run in a fresh process.\n"
        "mem: peak RSS of a fresh process, ours as main process / largest worker process."
    )
    for row, ours, hf in results:
        print(
            f"cores kept busy (CPU time / wall time) on {row.corpus}: "
            f"ours {ours['cpu_seconds'] / ours['seconds']:.2f}, "
            f"HF {hf['cpu_seconds'] / hf['seconds']:.2f}"
        )
    goals += large_goals(results, args.vocab, args.quick)
    return print_goals(goals)


if __name__ == "__main__":
    sys.exit(main())
