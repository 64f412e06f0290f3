"""The command line: ``bpe-course train | encode | decode | show`` (or ``python -m bpe_course``).

Examples::

    bpe-course train corpus.txt --vocab-size 10000 --special-tokens "<|endoftext|>" \\
        --pattern gpt4 --out my_tokenizer
    bpe-course encode --tokenizer my_tokenizer notes.txt > ids.txt
    bpe-course decode --tokenizer my_tokenizer < ids.txt
    bpe-course show --tokenizer gpt2 --text "Hello, world!"

``--tokenizer`` takes a folder written by ``train``, or ``gpt2`` / ``cl100k_base`` /
``o200k_base``.

This module only parses arguments and presents results; the work is the library's.
Mistakes get one line on stderr, never a traceback. Exit codes: 0 ok, 1 bad input or
tokenizer files (invalid UTF-8, an unknown id, a broken vocab.json), 2 a wrong command
line (unknown option, missing file, impossible vocab size, unusable --out), 130 Ctrl-C,
143 SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from typing import TypeVar

from . import export, openai
from .base import check_num_processes, check_special_tokens, corpus_paths, merges_to_learn
from .data import corpus_head
from .folder import (
    OUTPUT_FILES,
    claim_output_folder,
    load_tokenizer_folder,
    save_tokenizer_folder,
)
from .interrupts import Interrupted, stop_signals_raise
from .pretokenize import NAMED_PATTERNS
from .tokenizer import SPECIAL_POLICIES, DisallowedSpecialError, Tokenizer
from .utf8 import InvalidUtf8Error, iter_utf8, replace_lone_surrogates
from .viz import ansi_tokens, bytes_per_token

PROG = "bpe-course"
T = TypeVar("T")

#: Tokenizers that ``--tokenizer`` knows by name (they need no folder).
BUILTIN_TOKENIZERS = openai.BY_NAME

#: ``train`` measures bytes per token on at most this many bytes of the corpus.
SUMMARY_SAMPLE_BYTES = 1_000_000

#: A token id on the command line: ASCII digits only (``int()`` would also take ``١٢`` or ``1_0``).
TOKEN_ID = re.compile(r"[0-9]+")


class UsageError(Exception):
    """The command line asks for something impossible (exit code 2)."""


def printable(message: str) -> str:
    """``message`` with lone surrogates written as ``\\udcff``.

    Arguments that are not valid UTF-8 reach Python as lone surrogates (a file name with a
    Latin-1 byte, say); echoing them in an error must not itself fail.
    """
    return message.encode("utf-8", errors="backslashreplace").decode("utf-8")


class Parser(argparse.ArgumentParser):
    """argparse, whose usage errors may quote arguments that are not valid UTF-8."""

    def _print_message(self, message: str, file=None) -> None:
        super()._print_message(printable(message), file)


def checked(label: str, check: Callable[..., T], *args: object) -> T:
    """``check(*args)``, with a ValueError or OSError turned into a usage error (exit 2)."""
    try:
        return check(*args)
    except (OSError, ValueError, TypeError) as error:
        raise UsageError(f"{label}{error}") from None


@contextmanager
def open_input(path: str | None):
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
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8", errors="replace"))
    sys.stdout.buffer.flush()


def load_tokenizer(spec: str) -> Tokenizer:
    """A tokenizer from a folder written by ``train``, or a built-in one by name."""
    if not os.path.exists(spec):
        if spec in BUILTIN_TOKENIZERS:
            return BUILTIN_TOKENIZERS[spec]()
        raise UsageError(
            f"--tokenizer {spec!r}: no such folder (give a folder written by "
            f"'{PROG} train', or one of: {', '.join(BUILTIN_TOKENIZERS)})"
        )
    if not os.path.isdir(spec):
        raise UsageError(f"--tokenizer {spec!r} is a file; give the folder that holds it")
    return load_tokenizer_folder(spec)


def cmd_train(args: argparse.Namespace) -> int:
    from .train import train_bpe

    # Everything that can be checked is checked before the corpus is read.
    pattern = NAMED_PATTERNS[args.pattern]
    specials = checked("--special-tokens: ", check_special_tokens, args.special_tokens)
    wanted = checked("--vocab-size: ", merges_to_learn, args.vocab_size, specials)
    checked("", corpus_paths, args.corpus)
    checked("--processes: ", check_num_processes, args.processes)
    checked("--special-tokens: ", export.check_exportable, specials, pattern)
    claim = checked(f"--out {args.out!r}: ", claim_output_folder, args.out, args.force,
                    args.corpus)

    start = time.perf_counter()
    vocab, merges = train_bpe(
        args.corpus, args.vocab_size, specials, pattern=pattern,
        num_processes=args.processes, progress=not args.quiet,
    )
    seconds = time.perf_counter() - start
    tokenizer = Tokenizer(vocab, merges, specials, pattern)
    save_tokenizer_folder(tokenizer, claim)

    try:
        sample = corpus_head(args.corpus, SUMMARY_SAMPLE_BYTES)
        ratio = bytes_per_token(sample, tokenizer) if sample else 0.0
    except KeyboardInterrupt:
        return fail(f"interrupted the summary; the tokenizer is saved in {args.out}", 130)
    short = "" if len(merges) == wanted else f" (asked for {wanted}: the corpus ran out of pairs)"
    sampled = sum(os.path.getsize(path) for path in args.corpus) > SUMMARY_SAMPLE_BYTES
    which = "the corpus's first 1 MB" if sampled else "the corpus"
    print(f"learned {len(merges)} merges{short} in {seconds:.1f} s; vocab size {len(vocab)}")
    print(f"bytes per token on {which}: {ratio:.2f}")
    print(f"wrote {', '.join(OUTPUT_FILES)} to {args.out}")
    return 0


def cmd_encode(args: argparse.Namespace) -> int:
    tokenizer = load_tokenizer(args.tokenizer)
    count, batch = 0, []
    with open_input(args.file) as (stream, name):
        ids = tokenizer.encode_iterable(iter_utf8(stream, name), **SPECIAL_POLICIES[args.special])
        for token_id in ids:
            count += 1
            if not args.count:
                batch.append(str(token_id))
                if len(batch) >= 8192:  # ids go out in batches, each but the first after a space
                    write_out((" " if count > len(batch) else "") + " ".join(batch))
                    batch = []
    if args.count:
        write_out(f"{count}\n")
    else:
        write_out((" " if batch and count > len(batch) else "") + " ".join(batch) + "\n")
    return 0


def parse_ids(words: Sequence[str], where: str) -> list[int]:
    """Token ids written as ASCII digits; anything else names the word and where it was."""
    for word in words:
        if not TOKEN_ID.fullmatch(word):
            raise ValueError(f"{where}: {word!r} is not a token id (digits 0-9 only)")
    return [int(word) for word in words]


def cmd_decode(args: argparse.Namespace) -> int:
    tokenizer = load_tokenizer(args.tokenizer)
    words = args.ids if args.ids else read_text(None).split()
    text = tokenizer.decode(parse_ids(words, "arguments" if args.ids else "<stdin>"))
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
    n_bytes = len(replace_lone_surrogates(text).encode())  # what was encoded
    print(f"{n_tokens} tokens, {n_bytes} bytes", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description="Train, use and look at byte-level BPE tokenizers.")
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
    train.add_argument("--force", action="store_true",
                       help="replace --out even if it holds files this tool did not write")
    train.add_argument("--quiet", action="store_true", help="no progress bars")
    train.set_defaults(run=cmd_train)

    tokenizer_help = f"a folder written by 'train', or one of {', '.join(BUILTIN_TOKENIZERS)}"

    encode = commands.add_parser("encode", help="print the token ids of a text")
    encode.add_argument("--tokenizer", required=True, metavar="DIR", help=tokenizer_help)
    encode.add_argument("file", nargs="?", metavar="FILE", help="UTF-8 text (default: stdin)")
    encode.add_argument("--count", action="store_true", help="print only the number of tokens")
    encode.add_argument("--special", choices=list(SPECIAL_POLICIES), default="all",
                        help="special tokens in the text: ids (all), text (none) or an error")
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
    print(printable(f"{PROG}: error: {message}"), file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code instead of raising for user mistakes."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, or argparse already printed a usage error
        return int(exit_.code or 0)
    try:
        with stop_signals_raise():
            return args.run(args)
    except UsageError as error:
        return fail(str(error), 2)
    except KeyboardInterrupt as error:
        code = error.exit_code if isinstance(error, Interrupted) else 130
        nothing = "; nothing was written" if args.command == "train" else ""
        return fail(f"interrupted{nothing}", code)
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as Unix tools do, and point
        # stdout at /dev/null so Python's final flush does not complain either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except DisallowedSpecialError as error:  # its message names Python arguments, not options
        return fail(f"the input holds {error.token!r}: use --special all (an id) or none (text)", 1)
    except InvalidUtf8Error as error:
        # Its own message suggests errors='replace', which is Python API advice.
        where = f"{error.source}: not valid UTF-8 at byte offset {error.offset}"
        return fail(f"{where} ({error.reason}); the input must be UTF-8 text", 1)
    except (ValueError, OSError) as error:
        # Unknown ids, broken tokenizer files, unreadable files: the package raises each
        # with a message that names the problem and the file.
        return fail(str(error), 1)
