"""Training benchmarks: ``train_bpe`` beside Hugging Face ``tokenizers`` on the same files.

    .venv/bin/python -m bench.train                   # corpus.en, vocab 500; 10 MB stdlib, 10,000
    .venv/bin/python -m bench.train --shapes          # one text in four shapes, 32 MB, vocab 5,000
    .venv/bin/python -m bench.train --scale           # 300 MB of installed files, vocab 32,000
    .venv/bin/python -m bench.train --corpus my.txt   # the scale run on your own corpus
    .venv/bin/python -m bench.train --pathological    # one pretoken of 10 MB, four ways, vocab 300

``--quick`` makes each a smoke run. Gates first, so a wrong trainer cannot look fast:
``train_bpe`` must learn exactly ``train_bpe_naive``'s merges on the start of every corpus, and
CS336's 243 reference merges. Then each trainer runs in a fresh process, for its own peak
RSS and CPU/wall (cores kept busy): ours a process per core, HF a thread per core, both with
GPT-2's pattern; ``--runs N`` runs each N times by turns and keeps its fastest run. Only
the small ``corpus.en`` runs in this process, best of ``--repeat``.
Shapes lay the standard library's source out so that the safe places to cut it for parallel
counting differ. Scale builds its corpus from the text and code installed here, cached in
``.bench-cache/``; other machines hold other files, so compare ratios, not times. Its rows put
nanochat's ``rustbpe`` beside HF, with its merges as a gate (see below), and each trainer's
peak is its whole process tree's memory, summed (:func:`tree_memory`).
Pathological files are each a single pretoken under GPT-2's pattern (one letter, one pair
repeated, spaces, random digits); there the peer is nanochat's ``rustbpe``, and its merges
are the gate: the same as ours, or the same up to a tie that the two break differently.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import warnings
import zlib
from collections.abc import Iterator, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from bpe_course import train_bpe, train_bpe_naive
from bpe_course.base import ENDOFTEXT
from bpe_course.course.data import corpus_head, python_source, write_python_source
from bpe_course.formats.gpt2 import read_merges_txt
from bpe_course.pretokens import GPT2_PATTERN
from bpe_course.safety.files import atomic_write
from bpe_course.speed.counting import LongChunkWarning, count_file_pretokens
from bpe_course.speed.wordtable import WordTable

from .common import (
    MB,
    best_times,
    check,
    cpu_seconds,
    peak_rss,
    print_load,
    print_machine,
    ratio,
    seconds,
    size,
    table,
    verdict,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
CS336_DIR = REPO_ROOT.parent / "shared" / "reference" / "cs336"
#: (size in MB, vocab size) of each run, and of its --quick smoke run.
SIZES = {"default": (10, 10_000), "shapes": (32, 5000), "scale": (300, 32_000),
         "pathological": (10, 300)}
QUICK = {"default": (1, 1000), "shapes": (2.5, 500), "scale": (3, 1000), "pathological": (0.3, 300)}
GOALS = {"default": ["<= 0.8x HF"], "shapes": ["CPU/wall vs easy", "peak vs easy", "goals"]}
ROOTS = ["/usr/share/doc", "/usr/share/man", sysconfig.get_paths()["stdlib"],
         *map(str, sorted(Path("/usr/lib").glob("python3*"))), sysconfig.get_paths()["purelib"]]
TEXT = {"", ".py", ".pyi", ".txt", ".md", ".rst", ".html", ".c", ".h", ".json", ".toml", ".cfg",
        ".sh", ".css", ".js", ".xml", ".tex", ".yml", ".1", ".3", ".5", ".7", ".8"}
#: Visible ASCII to its fullwidth twin (``A`` to ``Ａ``): letters stay letters, digits digits,
#: punctuation punctuation, so the text pretokenizes alike, but no line starts or ends in ASCII.
FULLWIDTH = {code: code + 0xFEE0 for code in range(0x21, 0x7F)}


def gates(corpora: list[tuple[str, Path, list[str]]], folder: Path) -> bool:
    """CS336's reference merges, then ``train_bpe == train_bpe_naive`` on each corpus's start."""
    reference = CS336_DIR / "train-bpe-reference-merges.txt"
    expected = read_merges_txt(reference) if reference.is_file() else []
    merges = train_bpe(CS336_DIR / "corpus.en", 500, [ENDOFTEXT])[1] if expected else None
    where = "corpus.en, vocab 500" if expected else f"no reference files in {CS336_DIR}"
    passed = check("CS336 reference merges", merges, expected, where)
    for name, path, special_tokens in corpora:
        sample = folder / "sample.txt"
        sample.write_text(corpus_head([path], 30_000), encoding="utf-8", newline="")
        fast = train_bpe(sample, 400, special_tokens)[1]
        slow = train_bpe_naive(sample, 400, special_tokens)[1]
        passed &= check("train_bpe == train_bpe_naive", fast, slow, f"30 kB of {name}, vocab 400")
    return passed


def hf_trainer(vocab_size: int, special_tokens: Sequence[str]) -> tuple[Any, Any]:
    """HF byte-level BPE set up like ours: GPT-2's split, all 256 bytes first. One difference
    stays: HF does not cut at special tokens, so it also counts ``<|``, ``endoftext`` pieces."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(special_tokens),
                                  initial_alphabet=alphabet, show_progress=False)
    return tokenizer, trainer


def documents(path: str, special_tokens: Sequence[str], block: int = 1 << 20) -> Iterator[str]:
    """The text of ``path`` between special tokens, read a block at a time: how rustbpe gets a
    corpus, since it cuts at no special token of its own (it would count ``<|`` as a piece)."""
    if not special_tokens:
        yield Path(path).read_text(encoding="utf-8")
        return
    cut = re.compile("|".join(map(re.escape, sorted(special_tokens, key=len, reverse=True))))
    tail = ""
    with open(path, encoding="utf-8", newline="") as file:
        while data := file.read(block):
            *done, tail = cut.split(tail + data)
            yield from done
    yield tail


def train_here(who: str, path: str, vocab_size: int, special_tokens: list[str]) -> dict:
    """Train once in this fresh process: wall time, CPU/wall, peak RSS, vocabulary reached,
    and for ours and rustbpe a digest of each learned token in order (the gate)."""
    hf = hf_trainer(vocab_size, special_tokens) if who == "hf" else None
    tokens: list[bytes] = []
    cpu, start = cpu_seconds(), time.perf_counter()
    if hf:
        hf[0].train([path], hf[1])
        reached = hf[0].get_vocab_size()
    elif who == "rustbpe":
        import rustbpe

        tokenizer = rustbpe.Tokenizer()
        pieces = documents(path, special_tokens)
        tokenizer.train_from_iterator(pieces, vocab_size - len(special_tokens),
                                      pattern=GPT2_PATTERN)
    else:
        vocab = train_bpe(path, vocab_size, special_tokens, num_processes=None)[0]
        reached = len(vocab)
    wall = time.perf_counter() - start
    main, worker = peak_rss()
    cores = (cpu_seconds() - cpu) / wall
    if who == "rustbpe":
        ranked = sorted(tokenizer.get_mergeable_ranks(), key=lambda item: item[1])
        tokens = [bytes(token) for token, rank in ranked if rank >= 256]
        reached = len(ranked) + len(special_tokens)
    elif who == "ours":
        tokens = [vocab[index] for index in range(256 + len(special_tokens), len(vocab))]
    return {"wall": wall, "cores": cores, "main": main, "worker": worker, "vocab": reached,
            "tokens": [hashlib.sha1(token).hexdigest() for token in tokens],
            "lengths": [len(token) for token in tokens]}


def tree_memory(pid: int) -> int:
    """The memory of process ``pid`` and of all its descendants, summed (bytes): their
    proportional set size, in which a page shared by ``n`` processes (a forked worker shares
    its parent's) counts ``1/n`` in each, so the sum counts every page once."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/smaps_rollup", encoding="ascii") as rollup:
                total += next((int(line.split()[1]) * 1024 for line in rollup
                               if line.startswith("Pss:")), 0)
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children", encoding="ascii") as children:
                    pending += map(int, children.read().split())
        except (FileNotFoundError, ProcessLookupError):  # it ended meanwhile
            continue
    return total


def run_child(command: list[str], every: float = 0.02) -> tuple[subprocess.CompletedProcess, int]:
    """Run ``command``; also the peak of :func:`tree_memory`, sampled every ``every`` seconds
    from here (a thread in the trainer itself would compete with it for the interpreter)."""
    child = subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(every):
            peak = max(peak, tree_memory(child.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = child.communicate()
    done.set()
    sampler.join()
    return subprocess.CompletedProcess(command, child.returncode, out, err), peak


def train_pair(path: Path, vocab_size: int, special_tokens: Sequence[str], runs: int,
               peers: Sequence[str] = ("ours", "hf")) -> dict[str, dict]:
    """Ours and each peer, each in a fresh process, ``runs`` times by turns; each side's fastest
    run (a busy spell of a shared machine then falls on all alike). Stopping short fails."""
    best: dict[str, dict] = {}
    for _ in range(runs):
        for who in peers:
            command = [sys.executable, "-m", "bench.train", "--child", who, str(path),
                       str(vocab_size)]
            done, tree = run_child([*command, *special_tokens])
            if done.returncode != 0:
                raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr}")
            run = json.loads(done.stdout.splitlines()[-1])
            run["peak"] = max(run["main"], run["worker"] or 0)
            run["tree"] = tree
            if abs(run["vocab"] - vocab_size) > 0.01 * vocab_size:
                raise SystemExit(f"FAIL  {who} stopped at vocab {run['vocab']} of {vocab_size}")
            if who not in best or run["wall"] < best[who]["wall"]:
                best[who] = run
    return best


def shapes(n_bytes: int, folder: Path) -> list[tuple[str, Path, list[str]]]:
    """Four files of ``n_bytes``. A parallel trainer cuts where no pretoken can cross; the easy
    shape has ``<|endoftext|>`` between documents and the others take those cuts away. The
    source is taken twice, so shapes that grow (CRLF, two-byte letters) still fill the size."""
    documents = python_source(n_bytes).split(ENDOFTEXT) * 2
    lines = "\n".join(documents)
    crlf = lines.replace("\n", "\r\n")[: n_bytes - len(ENDOFTEXT)]
    middle = len(crlf) // 2
    texts = [
        ("LF, <|endoftext|> between documents", ENDOFTEXT.join(documents), [ENDOFTEXT]),
        ("CRLF, one <|endoftext|> in the middle", crlf[:middle] + ENDOFTEXT + crlf[middle:],
         [ENDOFTEXT]),
        ("lines of fullwidth letters, no special token", lines.translate(FULLWIDTH), []),
        ("no newline, no special token", lines.replace("\n", " "), []),
    ]
    corpora = []
    for index, (name, text, special_tokens) in enumerate(texts):
        data = text.encode("utf-8")[:n_bytes].decode("utf-8", "ignore").encode("utf-8")
        (folder / f"shape-{index}.txt").write_bytes(data)  # cut at a character boundary
        corpora.append((name, folder / f"shape-{index}.txt", special_tokens))
    return corpora


def installed_documents() -> Iterator[str]:
    """Every UTF-8 text file under ``ROOTS`` once, ``.gz`` ones decompressed, in a fixed order."""
    seen: set[bytes] = set()
    for root in dict.fromkeys(str(Path(root).resolve()) for root in ROOTS):
        for path in sorted(Path(root).rglob("*")):
            if Path(path.name.removesuffix(".gz")).suffix not in TEXT or path.is_symlink():
                continue
            try:
                data = path.read_bytes()
                data = gzip.decompress(data) if path.name.endswith(".gz") else data
                text = data.decode("utf-8")
            except (OSError, EOFError, zlib.error, UnicodeDecodeError):  # bad gzip, not UTF-8
                continue
            digest = hashlib.sha256(data).digest()
            if text.strip() and "\0" not in text and digest not in seen:
                seen.add(digest)
                yield text


def build_corpus(path: Path, n_bytes: int) -> Path:
    """Write up to ``n_bytes`` of installed documents to ``path``, atomically: never half."""
    print(f"building {path} from the text files under {', '.join(ROOTS)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with atomic_write(path) as file:
        for document in installed_documents():
            document = (ENDOFTEXT if written else "") + document
            written += len(document.encode("utf-8"))
            if written > n_bytes:
                break
            file.write(document)
    return path


def goal_cells(kind: str, ours: dict, hf: dict, easy: dict) -> list[str]:
    if kind == "default":
        return [verdict(ours["wall"] / hf["wall"], 0.8)]
    if kind == "shapes":
        cores, memory = ours["cores"] / easy["cores"], ours["peak"] / easy["peak"]
        goals = f"{'met' if cores >= 0.9 else 'missed'}, {verdict(memory, 1.5)}"
        return [f"{cores:.2f}", f"{memory:.2f}x", goals]
    raise ValueError(f"no goal cells for {kind!r}: the scale rows have their own table")


# Pathological corpora: one pretoken of 10 MB -----------------------------------------------


def pathological_corpora(n_bytes: int, folder: Path) -> list[tuple[str, Path]]:
    """Four files of ``n_bytes``, each one pretoken under GPT-2's pattern (no newline)."""
    digits = "".join(random.Random(0).choices("0123456789", k=n_bytes))
    texts = [("one letter", "a" * n_bytes), ("one pair repeated", "ab" * (n_bytes // 2)),
             ("spaces", " " * n_bytes), ("random digits", digits)]
    corpora = []
    for index, (name, text) in enumerate(texts):
        path = folder / f"pathological-{index}.txt"
        path.write_text(text, encoding="ascii")
        corpora.append((name, path))
    return corpora


def peer_here(who: str, path: str, vocab_size: int) -> dict:
    """Train once in this fresh process, ours or rustbpe: wall time, peak RSS, and a digest of
    each learned token in order (a token can be megabytes; the parent compares digests).

    rustbpe's peak is read right after training, before its tokens are copied out to Python.
    """
    start = time.perf_counter()
    try:
        if who == "ours":
            vocab = train_bpe(path, vocab_size, num_processes=None)[0]
            wall, (main, worker) = time.perf_counter() - start, peak_rss()
            tokens = [vocab[index] for index in range(256, len(vocab))]
        else:
            import rustbpe

            with open(path, encoding="utf-8") as file:
                text = file.read()
            tokenizer = rustbpe.Tokenizer()
            tokenizer.train_from_iterator(iter([text]), vocab_size, pattern=GPT2_PATTERN)
            wall, (main, worker) = time.perf_counter() - start, peak_rss()
            ranked = sorted(tokenizer.get_mergeable_ranks(), key=lambda item: item[1])
            tokens = [bytes(token) for token, rank in ranked if rank >= 256]
    except BaseException as error:  # rustbpe's PanicException is a BaseException
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        return {"error": f"{type(error).__name__}: {str(error).splitlines()[0][:80]}"}
    digests = [hashlib.sha1(token).hexdigest() for token in tokens]
    return {"wall": wall, "main": main, "worker": worker or 0, "tokens": digests,
            "lengths": [len(token) for token in tokens]}


def run_peer(who: str, path: Path, vocab_size: int, runs: int) -> dict:
    """``peer_here`` in a fresh process, ``runs`` times; the fastest run (or the error)."""
    best: dict = {}
    for _ in range(runs):
        command = [sys.executable, "-m", "bench.train", "--peer-child", who, str(path),
                   str(vocab_size)]
        done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return {"error": f"exit code {done.returncode}: {done.stderr.strip()[-200:]}"}
        run = json.loads(done.stdout.splitlines()[-1])
        if "error" in run or not best or run["wall"] < best["wall"]:
            best = run
        if "error" in run:
            break
    return best


def tie_note(path: Path, ours: dict, theirs: dict, vocab_size: int,
             special_tokens: Sequence[str] = ()) -> str:
    """Where our tokens and rustbpe's part, and whether that is a tie broken two ways: replay
    our merges up to there and compare the counts of the two pairs that make the two tokens."""
    index = next((i for i, (a, b) in enumerate(zip(ours["tokens"], theirs["tokens"])) if a != b),
                 None)
    if index is None:
        if len(ours["tokens"]) == len(theirs["tokens"]):
            return "identical"
        return f"same {min(len(ours['tokens']), len(theirs['tokens']))}, then one stops"
    first = 256 + len(special_tokens)  # the id of the first merge
    counts = count_file_pretokens([str(path)], special_tokens)
    vocab, merges = train_bpe(path, first + index + 1, special_tokens)
    specials = range(256, first)
    ids = {token: token_id for token_id, token in vocab.items() if token_id not in specials}
    words = [(word.encode(), count) for word, count in counts.items()]
    table = WordTable([(data, count) for data, count in words if len(data) > 1])
    for step, (left, right) in enumerate(merges[:index]):
        table.merge(chr(ids[left]) + chr(ids[right]), chr(first + step))
    ours_pair = chr(ids[merges[index][0]]) + chr(ids[merges[index][1]])
    # rustbpe's token at that rank: the two tokens learned before it that spell it.
    length = theirs["lengths"][index]
    known = [token for token, token_id in ids.items() if token_id < first + index]
    candidates = [(left, right) for left in known for right in known
                  if len(left) + len(right) == length
                  and hashlib.sha1(left + right).hexdigest() == theirs["tokens"][index]]
    if not candidates:
        return f"differ from merge {index} on (rustbpe's token there is not two of ours)"
    # A token may be spelt by several pairs ("aaa" + "a", "aa" + "aa"): the one that occurs.
    spellings = [chr(ids[left]) + chr(ids[right]) for left, right in candidates]
    theirs_pair = max(spellings, key=lambda pair: table.pair_counts.get(pair, 0))
    mine, other = table.pair_counts.get(ours_pair, 0), table.pair_counts.get(theirs_pair, 0)
    if mine != other:
        return f"FAIL: differ from merge {index} on, counts {mine} (ours) vs {other} (rustbpe)"
    return (f"same {index}, then a tie ({mine} each): rustbpe takes the lower ids "
            f"({ord(theirs_pair[0])}, {ord(theirs_pair[1])}), ours the greater bytes "
            f"({ord(ours_pair[0])}, {ord(ours_pair[1])})")


def pathological(n_bytes: int, vocab_size: int, runs: int) -> int:
    """The four one-pretoken corpora: gates, then ours beside rustbpe, each in a fresh process."""
    try:
        import rustbpe  # noqa: F401
    except ImportError:
        rustbpe_here = False
    else:
        rustbpe_here = True
    rows = []
    passed = True
    with tempfile.TemporaryDirectory(prefix="bench-train-") as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore", LongChunkWarning)  # each file is one long stretch
        folder = Path(tmp)
        corpora = pathological_corpora(n_bytes, folder)
        if not gates([(name, path, []) for name, path in corpora], folder):
            return 1
        for name, path in corpora:
            ours = run_peer("ours", path, vocab_size, runs)
            if "error" in ours:
                print(f"FAIL  train_bpe on {name}: {ours['error']}")
                return 1
            theirs = run_peer("rustbpe", path, vocab_size, runs) if rustbpe_here else None
            ours_peak = ours["main"] + ours["worker"]  # the process and its largest worker
            cells = [seconds(ours["wall"]), size(ours_peak)]
            if theirs is None or "error" in theirs:
                why = "not installed" if theirs is None else theirs["error"]
                print(f"SKIP  merges == rustbpe's: {name}: rustbpe {why}")
                cells += ["-", "-", "-", "-", f"rustbpe: {why}", "-"]
            else:
                note = tie_note(path, ours, theirs, vocab_size)
                passed &= not note.startswith("FAIL")
                print(f"{'FAIL' if note.startswith('FAIL') else 'PASS'}  merges == rustbpe's: "
                      f"{name}: {note}")
                time_ratio, memory = ours["wall"] / theirs["wall"], ours_peak / theirs["main"]
                goals = f"{verdict(time_ratio, 2)}, {verdict(memory, 1)}"
                cells += [seconds(theirs["wall"]), size(theirs["main"]), f"{time_ratio:.2f}x",
                          f"{memory:.2f}x", note.split(":")[0], goals]
            rows.append([name, size(path.stat().st_size), str(vocab_size), *cells])
    header = ["corpus (one pretoken)", "size", "vocab", "ours", "ours peak", "rustbpe",
              "rustbpe peak", "time vs rustbpe", "peak vs rustbpe", "merges", "goals: <= 2x, <= 1x"]
    table("Training on one giant pretoken (ours: train_bpe; rustbpe: nanochat's Rust trainer)",
          header, rows)
    print(f"\nEach trainer in a fresh process, fastest of {runs} run(s); both read the file. "
          "Ours: peak RSS of the process plus its largest worker; rustbpe: peak RSS right after "
          "training. Merges: where the learned tokens part, and whether that is a tie.")
    print_load("end")
    return 0 if passed else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.train", description=__doc__)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--shapes", action="store_true", help="one corpus in four shapes")
    mode.add_argument("--scale", action="store_true", help="a big corpus of installed files")
    mode.add_argument("--corpus", type=Path, help="the scale run on this file")
    mode.add_argument("--pathological", action="store_true",
                      help="four 10 MB files that are each one pretoken, beside rustbpe")
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument("--size-mb", type=float, help="corpus size (10, 32 or 300 MB)")
    parser.add_argument("--vocab-size", type=int, help="10,000, 5,000 or 32,000")
    parser.add_argument("--repeat", type=int, default=5, help="runs of the corpus.en row")
    parser.add_argument("--runs", type=int, default=1,
                        help="runs of each other row by turns, fastest kept (default 1)")
    parser.add_argument("--cache-dir", type=Path, default=REPO_ROOT / ".bench-cache")
    args = parser.parse_args(argv)
    kind = "shapes" if args.shapes else "scale" if args.scale or args.corpus else "default"
    kind = "pathological" if args.pathological else kind
    size_mb, vocab_size = (QUICK if args.quick else SIZES)[kind]
    n_bytes, vocab_size = int((args.size_mb or size_mb) * MB), args.vocab_size or vocab_size
    if args.corpus and not args.corpus.is_file():
        parser.error(f"--corpus {args.corpus}: no such file")
    if kind == "pathological":
        print_machine([name for name in ("rustbpe", "regex") if installed(name)])
        return pathological(n_bytes, vocab_size, args.runs)
    print_machine(["tokenizers", "regex"])

    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-train-") as tmp:
        folder = Path(tmp)
        if kind == "shapes":
            corpora = shapes(n_bytes, folder)
        elif kind == "scale":
            path = args.corpus or args.cache_dir / f"installed-{n_bytes / MB:g}MB.txt"
            if not path.is_file():
                build_corpus(path, n_bytes)
            corpora = [(path.name, path, [ENDOFTEXT])]
        else:
            path = write_python_source(folder / "stdlib.txt", n_bytes)
            corpora = [("stdlib source", path, [ENDOFTEXT])]
        if not gates(corpora, folder):
            return 1
        corpus = CS336_DIR / "corpus.en"
        if kind == "default" and corpus.is_file():
            train_ours = (lambda _: train_bpe(corpus, 500, [ENDOFTEXT]), lambda: None)
            new_hf = functools.partial(hf_trainer, 500, [ENDOFTEXT])
            train_hf = (lambda hf: hf[0].train([str(corpus)], hf[1]), new_hf)
            (ours, _), (hf, _) = best_times(args.repeat, train_ours, train_hf)
            cells = [seconds(ours), "-", "-", seconds(hf), "-", "-", ratio(ours, hf), "-"]
            rows.append(["CS336 corpus.en", size(corpus.stat().st_size), "500", *cells])
        if kind == "scale":
            return scale(corpora, vocab_size, args.runs)
        easy = None
        for name, path, special_tokens in corpora:
            both = train_pair(path, vocab_size, special_tokens, args.runs)
            ours, hf = both["ours"], both["hf"]
            easy = easy or ours
            worker = f" / {size(ours['worker'])}" if ours["worker"] else ""
            cells = [seconds(ours["wall"]), f"{ours['cores']:.2f}", size(ours["main"]) + worker,
                     seconds(hf["wall"]), f"{hf['cores']:.2f}", size(hf["main"]),
                     ratio(ours["wall"], hf["wall"]), *goal_cells(kind, ours, hf, easy)]
            rows.append([name, size(path.stat().st_size), f"{vocab_size:,}", *cells])

    header = ["corpus", "size", "vocab", "ours", "CPU/wall", "RSS main / worker", "HF",
              "CPU/wall", "HF RSS", "time vs HF", *GOALS[kind]]
    table(f"Training ({kind}; ours: train_bpe; HF: BpeTrainer)", header, rows)
    print(f"\nCPU/wall: CPU time of the process and its workers over wall time. RSS: peak of "
          "the main process / largest worker; peak: the larger of the two. corpus.en: best of "
          f"{args.repeat} in this process; other rows: fastest of {args.runs} run(s) per trainer, "
          "each in a fresh process, by turns.")
    print_load("end")
    return 0


def scale(corpora: list[tuple[str, Path, list[str]]], vocab_size: int, runs: int) -> int:
    """The scale rows: ours beside rustbpe and HF, each in a fresh process. rustbpe gets the
    text between special tokens (as ours counts it), so its merges are a gate: the same as
    ours, or the same up to a tie that the two break differently."""
    peers = ["ours", "rustbpe", "hf"] if installed("rustbpe") else ["ours", "hf"]
    if "rustbpe" not in peers:
        print("SKIP  merges == rustbpe's: rustbpe is not installed")
    rows, passed = [], True
    for name, path, special_tokens in corpora:
        runs_of = train_pair(path, vocab_size, special_tokens, runs, peers)
        ours, hf, rust = runs_of["ours"], runs_of["hf"], runs_of.get("rustbpe")
        done = [run for run in (ours, rust, hf) if run]
        cells = [" / ".join(seconds(run["wall"]) for run in done),
                 " / ".join(f"{run['wall'] * run['cores']:.1f} s" for run in done),
                 " / ".join(size(run["tree"]) for run in done)]
        goals = []
        if rust is None:
            cells += ["-", "-", "-", "rustbpe: not installed"]
        else:
            note = tie_note(path, ours, rust, vocab_size, special_tokens)
            passed &= not note.startswith("FAIL")
            print(f"{'FAIL' if note.startswith('FAIL') else 'PASS'}  merges == rustbpe's: "
                  f"{name}: {note}")
            time_ratio, memory = ours["wall"] / rust["wall"], ours["tree"] / rust["tree"]
            cpu_ratio = ours["wall"] * ours["cores"] / (rust["wall"] * rust["cores"])
            cells += [f"{time_ratio:.2f}x", f"{cpu_ratio:.2f}x", f"{memory:.2f}x",
                      note.split(":")[0]]
            goals += [verdict(time_ratio, 1), verdict(memory, 1)]
        cells.append(ratio(ours["wall"], hf["wall"]))
        goals.append(verdict(ours["wall"] / hf["wall"], 0.5))
        rows.append([name, size(path.stat().st_size), f"{vocab_size:,}", *cells, ", ".join(goals)])
    who = " / ".join(["ours", "rustbpe", "HF"] if "rustbpe" in peers else ["ours", "HF"])
    header = ["corpus", "size", "vocab", f"time: {who}", f"CPU time: {who}", f"peak: {who}",
              "time vs rustbpe", "CPU time vs rustbpe", "peak vs rustbpe", "merges vs rustbpe",
              "time vs HF", "goals: <= 1x rustbpe, peak <= rustbpe's, <= 0.5x HF"]
    table("Training at scale (ours: train_bpe; rustbpe: nanochat's trainer; HF: BpeTrainer)",
          header, rows)
    print(f"\nEach trainer in a fresh process, fastest of {runs} run(s), by turns. Peak: the "
          "memory of the process and all its workers summed (proportional set size, so a page "
          "a forked worker shares with its parent counts once), sampled every 20 ms. CPU "
          "time: of the process and its workers, all threads; on a busy machine it moves less "
          "than wall time does. rustbpe reads the file a block at a time and gets the text "
          "between special tokens.")
    print_load("end")
    return 0 if passed else 1


def installed(name: str) -> bool:
    try:
        metadata.version(name)
    except metadata.PackageNotFoundError:
        return False
    return True


if __name__ == "__main__":
    if sys.argv[1:2] == ["--peer-child"]:
        who, path, vocab = sys.argv[2:5]
        print(json.dumps(peer_here(who, path, int(vocab))))
    elif sys.argv[1:2] == ["--child"]:
        who, path, vocab, *specials = sys.argv[2:]
        print(json.dumps(train_here(who, path, int(vocab), specials)))
    else:
        raise SystemExit(main())
