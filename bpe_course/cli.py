"""The command line: ``bpe-course train | encode | decode | show`` (or ``python -m bpe_course``).

Examples::

    bpe-course train corpus.txt --vocab-size 10000 --special-tokens "<|endoftext|>" \\
        --pattern gpt4 --out my_tokenizer
    bpe-course encode --tokenizer my_tokenizer notes.txt > ids.txt
    bpe-course decode --tokenizer my_tokenizer < ids.txt
    bpe-course show --tokenizer gpt2 --text "Hello, world!"

``--tokenizer`` takes a folder written by ``train``, or ``gpt2`` / ``cl100k_base``.

Mistakes get one line on stderr, never a traceback. Exit codes: 0 ok, 1 the input or a
tokenizer file is bad (invalid UTF-8, an unknown id, a broken vocab.json), 2 the command
line is wrong (unknown option, missing file, impossible vocab size), 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import BinaryIO

from .naive import count_merges
from .pretokenize import NAMED_PATTERNS, check_special_tokens
from .tokenizer import Tokenizer
from .utf8 import InvalidUtf8Error
from .viz import ansi_tokens

PROG = "bpe-course"

#: The files ``train`` writes; ``config.json`` lets ``--tokenizer DIR`` reload the rest.
OUTPUT_FILES = ("vocab.json", "merges.txt", "tokenizer.json", "tokenizer.tiktoken", "config.json")

#: Tokenizers that ``--tokenizer`` knows by name (they need no folder).
BUILTIN_TOKENIZERS = ("gpt2", "cl100k_base")

#: ``train`` measures bytes per token on at most this many characters of the corpus.
SUMMARY_SAMPLE_CHARS = 1_000_000

#: Input is read and decoded in blocks of this many bytes.
READ_BLOCK = 1 << 20


class UsageError(Exception):
    """The command line asks for something impossible (exit code 2)."""


# Reading input ----------------------------------------------------------------------------


def iter_utf8(stream: BinaryIO, name: str) -> Iterator[str]:
    """Decode a byte stream block by block; invalid UTF-8 raises with the byte offset.

    Reading bytes (not text mode) keeps ``\\r\\n`` as it is, which matters: a tokenizer
    must see exactly the characters in the file.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    consumed = 0
    while True:
        block = stream.read(READ_BLOCK)
        pending = len(decoder.getstate()[0])
        try:
            text = decoder.decode(block, final=not block)
        except UnicodeDecodeError as error:
            raise InvalidUtf8Error(name, consumed - pending + error.start, error.reason) from None
        consumed += len(block)
        if text:
            yield text
        if not block:
            return


@contextmanager
def open_input(path: str | None) -> Iterator[tuple[BinaryIO, str]]:
    """The binary stream to read (a file, or stdin for ``None``/``-``) and its name."""
    if path is None or path == "-":
        yield sys.stdin.buffer, "<stdin>"
        return
    if not os.path.isfile(path):
        raise UsageError(f"input file not found: {path}")
    with open(path, "rb") as file:
        yield file, path


def read_text(path: str | None) -> str:
    """All of a file (or stdin) as text, strictly UTF-8."""
    with open_input(path) as (stream, name):
        return "".join(iter_utf8(stream, name))


def write_out(text: str) -> None:
    """Write ``text`` to stdout as UTF-8 whatever the terminal's encoding claims."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(text)
        return
    sys.stdout.flush()
    buffer.write(text.encode("utf-8"))
    buffer.flush()


# Tokenizer folders ------------------------------------------------------------------------


def save_tokenizer_dir(tokenizer: Tokenizer, folder: str, pattern_name: str) -> None:
    """Write every output file of ``train`` into ``folder`` (which must exist)."""
    tokenizer.save(os.path.join(folder, "vocab.json"), os.path.join(folder, "merges.txt"))
    tokenizer.save_hf(os.path.join(folder, "tokenizer.json"))
    tokenizer.save_tiktoken(os.path.join(folder, "tokenizer.tiktoken"))
    config = {
        "pattern": pattern_name,
        "special_tokens": list(tokenizer.special_tokens),
        "vocab_size": tokenizer.vocab_size,
        "merges": len(tokenizer.merges),
    }
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as file:
        json.dump(config, file, ensure_ascii=False, indent=2)
        file.write("\n")


def load_tokenizer(spec: str) -> Tokenizer:
    """A tokenizer from a folder written by ``train``, or ``gpt2`` / ``cl100k_base``."""
    if not os.path.exists(spec):
        if spec in BUILTIN_TOKENIZERS:
            from . import openai

            return openai.gpt2() if spec == "gpt2" else openai.cl100k_base()
        raise UsageError(
            f"--tokenizer {spec!r}: no such folder (give a folder written by "
            f"'{PROG} train', or one of: {', '.join(BUILTIN_TOKENIZERS)})"
        )
    if not os.path.isdir(spec):
        raise UsageError(f"--tokenizer {spec!r} is a file; give the folder that holds it")
    config_path = os.path.join(spec, "config.json")
    config: dict = {}
    if os.path.exists(config_path):
        try:
            with open(config_path, encoding="utf-8") as file:
                config = json.load(file)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ValueError(f"{config_path}: not valid JSON ({error})") from None
        if not isinstance(config, dict):
            raise ValueError(f"{config_path}: expected a JSON object")
    specials = config.get("special_tokens", [])
    if not isinstance(specials, list) or not all(isinstance(t, str) for t in specials):
        raise ValueError(f"{config_path}: special_tokens must be a list of strings")
    pattern_name = config.get("pattern", "gpt2")
    if pattern_name not in NAMED_PATTERNS:
        known = ", ".join(NAMED_PATTERNS)
        raise ValueError(f"{config_path}: unknown pattern {pattern_name!r} (known: {known})")
    if not os.path.exists(os.path.join(spec, "vocab.json")):
        raise ValueError(
            f"{spec} has no vocab.json; a tokenizer folder holds vocab.json, merges.txt "
            f"and config.json as written by '{PROG} train'"
        )
    return Tokenizer.from_files(
        os.path.join(spec, "vocab.json"),
        os.path.join(spec, "merges.txt"),
        specials,
        NAMED_PATTERNS[pattern_name],
    )


# Commands ---------------------------------------------------------------------------------


def corpus_sample(paths: Sequence[str], max_chars: int) -> str:
    """The first ``max_chars`` characters of the corpus files, for the summary."""
    parts: list[str] = []
    for path in paths:
        if max_chars <= 0:
            break
        with open(path, encoding="utf-8", errors="replace", newline="") as file:
            parts.append(file.read(max_chars))
        max_chars -= len(parts[-1])
    return "".join(parts)


@contextmanager
def ctrl_c_in_this_process_only() -> Iterator[None]:
    """Let only this process react to Ctrl-C while training runs.

    A terminal sends Ctrl-C to every process of the command, so each worker counting
    pretokens would die with its own traceback. Workers started by fork inherit this
    handler, which ignores the signal outside the parent; the parent raises
    ``KeyboardInterrupt`` and its ``with Pool(...)`` block stops the workers.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set in the main thread
        return
    parent = os.getpid()
    pressed: list[bool] = []

    def handler(signum, frame) -> None:
        if os.getpid() == parent:
            pressed.append(True)
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    # Python drops an exception raised inside some callbacks (one runs right after each
    # fork), so a Ctrl-C at that moment would be lost; remember it and stop here instead.
    if pressed:
        raise KeyboardInterrupt


def use_default_permissions(folder: str) -> None:
    """Give ``folder`` and its files the permissions a plain ``open``/``mkdir`` would.

    Temporary files and folders are created private (0600/0700) for safety; the finished
    tokenizer should be as readable as any other file the user writes.
    """
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(folder, 0o777 & ~umask)
    for name in os.listdir(folder):
        os.chmod(os.path.join(folder, name), 0o666 & ~umask)


def publish(staging: str, out: str) -> None:
    """Move finished files from ``staging`` into ``out``, each with one atomic rename."""
    if not os.path.exists(out):
        os.rename(staging, out)
        return
    for name in OUTPUT_FILES:
        os.replace(os.path.join(staging, name), os.path.join(out, name))
    os.rmdir(staging)


def cmd_train(args: argparse.Namespace) -> int:
    from .train import train_bpe

    try:
        specials = check_special_tokens(args.special_tokens)
    except ValueError as error:
        raise UsageError(f"--special-tokens: {error}") from None
    try:
        count_merges(args.vocab_size, specials)
    except ValueError as error:
        raise UsageError(f"--vocab-size: {error}") from None
    for path in args.corpus:
        if not os.path.isfile(path):
            raise UsageError(f"corpus file not found: {path}")
    out = os.path.abspath(args.out)
    if os.path.exists(out) and not os.path.isdir(out):
        raise UsageError(f"--out {args.out!r} is a file, not a folder")
    if args.processes is not None and args.processes < 1:
        raise UsageError(f"--processes must be at least 1, got {args.processes}")

    start = time.perf_counter()
    with ctrl_c_in_this_process_only():
        vocab, merges = train_bpe(
            args.corpus,
            args.vocab_size,
            specials,
            pattern=NAMED_PATTERNS[args.pattern],
            num_processes=args.processes,
            progress=not args.quiet,
        )
    seconds = time.perf_counter() - start
    tokenizer = Tokenizer(vocab, merges, specials, NAMED_PATTERNS[args.pattern])

    # Write everything into a hidden folder beside --out, then move it in: an error or
    # Ctrl-C before the move leaves --out exactly as it was.
    parent = os.path.dirname(out)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{os.path.basename(out)}.partial-", dir=parent)
    try:
        save_tokenizer_dir(tokenizer, staging, args.pattern)
        use_default_permissions(staging)
        publish(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise

    try:
        sample = corpus_sample(args.corpus, SUMMARY_SAMPLE_CHARS)
        n_tokens = len(tokenizer.encode(sample))
    except KeyboardInterrupt:
        return fail(f"interrupted the summary; the tokenizer is saved in {args.out}", 130)
    ratio = len(sample.encode("utf-8")) / n_tokens if n_tokens else 0.0
    wanted = count_merges(args.vocab_size, specials)
    short = "" if len(merges) == wanted else f" (asked for {wanted}: the corpus ran out of pairs)"
    which = "the corpus" if len(sample) < SUMMARY_SAMPLE_CHARS else "the corpus's first 1M chars"
    print(f"learned {len(merges)} merges{short} in {seconds:.1f} s; vocab size {len(vocab)}")
    print(f"bytes per token on {which}: {ratio:.2f}")
    print(f"wrote {', '.join(OUTPUT_FILES)} to {args.out}")
    return 0


def cmd_encode(args: argparse.Namespace) -> int:
    tokenizer = load_tokenizer(args.tokenizer)
    count = 0
    first = True  # nothing written yet, so no space before the next batch
    batch: list[str] = []
    with open_input(args.file) as (stream, name):
        for token_id in tokenizer.encode_iterable(iter_utf8(stream, name)):
            count += 1
            if args.count:
                continue
            batch.append(str(token_id))
            if len(batch) >= 8192:
                write_out(("" if first else " ") + " ".join(batch))
                first, batch = False, []
    if args.count:
        write_out(f"{count}\n")
    else:
        write_out(("" if first or not batch else " ") + " ".join(batch) + "\n")
    return 0


def parse_ids(words: Sequence[str], where: str) -> list[int]:
    ids = []
    for word in words:
        try:
            ids.append(int(word))
        except ValueError:
            raise ValueError(f"{where}: {word!r} is not a token id (a whole number)") from None
    return ids


def cmd_decode(args: argparse.Namespace) -> int:
    tokenizer = load_tokenizer(args.tokenizer)
    if args.ids:
        ids = parse_ids(args.ids, "arguments")
    else:
        ids = parse_ids(read_text(None).split(), "<stdin>")
    text = tokenizer.decode(ids)
    if sys.stdout.isatty() and not text.endswith("\n"):
        text += "\n"
    write_out(text)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    tokenizer = load_tokenizer(args.tokenizer)
    if args.text is not None and args.file is not None:
        raise UsageError("give a FILE or --text, not both")
    text = args.text if args.text is not None else read_text(args.file)
    coloured = ansi_tokens(text, tokenizer)
    n_tokens = len(tokenizer.encode(text))
    write_out(coloured + ("" if coloured.endswith("\n") else "\n"))
    print(f"{n_tokens} tokens, {len(text.encode('utf-8'))} bytes", file=sys.stderr)
    return 0


# Parsing ----------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Train, use and look at byte-level BPE tokenizers."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    train = commands.add_parser("train", help="train a tokenizer on text files")
    train.add_argument("corpus", nargs="+", metavar="CORPUS", help="UTF-8 text file(s)")
    train.add_argument("--vocab-size", type=int, required=True, metavar="N",
                       help="total ids: 256 bytes + special tokens + merges")
    train.add_argument("--special-tokens", nargs="+", default=[], metavar="TOK",
                       help='e.g. "<|endoftext|>"; never merged, always one id (put the '
                       "corpus files before this option)")
    train.add_argument("--pattern", choices=sorted(NAMED_PATTERNS), default="gpt2",
                       help="the split pattern (default: gpt2)")
    train.add_argument("--processes", type=int, default=None, metavar="K",
                       help="worker processes for counting (default: every core)")
    train.add_argument("--out", required=True, metavar="DIR",
                       help="folder for vocab.json, merges.txt, tokenizer.json, ...")
    train.add_argument("--quiet", action="store_true", help="no progress bars")
    train.set_defaults(run=cmd_train)

    tokenizer_help = "a folder written by 'train', or gpt2 or cl100k_base"

    encode = commands.add_parser("encode", help="print the token ids of a text")
    encode.add_argument("--tokenizer", required=True, metavar="DIR", help=tokenizer_help)
    encode.add_argument("file", nargs="?", metavar="FILE", help="UTF-8 text (default: stdin)")
    encode.add_argument("--count", action="store_true", help="print only the number of tokens")
    encode.set_defaults(run=cmd_encode)

    decode = commands.add_parser("decode", help="print the text of token ids")
    decode.add_argument("--tokenizer", required=True, metavar="DIR", help=tokenizer_help)
    decode.add_argument("ids", nargs="*", metavar="ID", help="token ids (default: from stdin)")
    decode.set_defaults(run=cmd_decode)

    show = commands.add_parser("show", help="colour the token boundaries of a text")
    show.add_argument("--tokenizer", required=True, metavar="DIR", help=tokenizer_help)
    show.add_argument("file", nargs="?", metavar="FILE", help="UTF-8 text (default: stdin)")
    show.add_argument("--text", help="the text to show, instead of a file")
    show.set_defaults(run=cmd_show)
    return parser


def fail(message: str, code: int) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code instead of raising for user mistakes."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, or argparse already printed a usage error
        return int(exit_.code or 0)
    try:
        return args.run(args)
    except UsageError as error:
        return fail(str(error), 2)
    except KeyboardInterrupt:
        nothing = "; nothing was written" if args.command == "train" else ""
        return fail(f"interrupted{nothing}", 130)
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as Unix tools do, and point
        # stdout at /dev/null so Python's final flush does not complain either.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except InvalidUtf8Error as error:
        # Its own message suggests errors='replace', which is Python API advice.
        where = f"{error.source}: not valid UTF-8 at byte offset {error.offset}"
        return fail(f"{where} ({error.reason}); the input must be UTF-8 text", 1)
    except (ValueError, OSError) as error:
        # Unknown ids, broken tokenizer files, unreadable files: the package raises each
        # with a message that names the problem and the file.
        return fail(str(error), 1)
