"""The command line: ``bpe-course train | encode | decode | show`` (or ``python -m bpe_course``).

Examples::

    bpe-course train corpus.txt --vocab-size 10000 --special-tokens "<|endoftext|>" \\
        --pattern gpt4 --out my_tokenizer
    bpe-course encode --tokenizer my_tokenizer notes.txt > ids.txt
    bpe-course decode --tokenizer my_tokenizer < ids.txt
    bpe-course show --tokenizer gpt2 --text "Hello, world!"

``--tokenizer`` takes a folder written by ``train``, or ``gpt2``/``cl100k_base``/``o200k_base``.
This module only parses arguments and presents results; the work is the library's.
Mistakes get one line on stderr, never a traceback. Exit codes: 0 ok, 1 bad input, bad
tokenizer files or output that cannot be written, 2 a wrong command line (unknown option,
missing file, impossible vocab size, unusable --out, closed stdin), 128 + the signal when
stopped (130 Ctrl-C, 143 SIGTERM, 129 a closed terminal). Arguments are read as UTF-8.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from typing import Any

from .. import base, openai, utf8
from ..course.data import corpus_head
from ..course.viz import ansi_tokens, bytes_per_token
from ..formats import export, folder
from ..pretokens import NAMED_PATTERNS
from ..safety.interrupts import Interrupted, ignore_stop_signals, stop_signals_raise
from ..safety.quoting import quote
from ..safety.specials import SPECIAL_POLICIES, DisallowedSpecialError
from ..speed import counting, workers
from ..tokenizer import Tokenizer
from . import terminal

PROG = "bpe-course"

#: Tokenizers that ``--tokenizer`` knows by name (they need no folder).
BUILTIN_TOKENIZERS = openai.BY_NAME

#: ``train`` measures bytes per token on at most this many bytes of the corpus.
SUMMARY_SAMPLE_BYTES = 1_000_000


class UsageError(Exception):
    """The command line asks for something impossible (exit code 2)."""


class Parser(argparse.ArgumentParser):
    """argparse, whose usage errors may quote arguments that are not valid UTF-8."""

    def _print_message(self, message: str, file=None) -> None:
        super()._print_message(terminal.printable(message), file)


def checked(label: str, check: Callable[..., Any], *args: object) -> Any:
    """``check(*args)``, with a ValueError or OSError turned into a usage error (exit 2)."""
    try:
        return check(*args)
    except (OSError, ValueError, TypeError) as error:
        raise UsageError(f"{label}{error}") from None


@contextmanager
def open_input(path: str | None, what: str = "text"):
    """The binary stream to read (a file, or stdin for ``None``/``-``) and its name."""
    if path is None or path == "-":
        if sys.stdin is None:
            raise UsageError(f"standard input is closed; give the {what} as arguments or a file")
        if sys.stdin.isatty():
            print(f"{PROG}: reading {what} from the terminal; end with Ctrl-D", file=sys.stderr)
        yield sys.stdin.buffer, "<stdin>"
        return
    if not os.path.exists(path):  # pipes (``<(zcat notes.gz)``) and /dev/null are fine
        raise UsageError(f"input file not found: {path}")
    if os.path.isdir(path):
        raise UsageError(f"{path} is a folder, not a file")
    with open(path, "rb") as file:
        yield file, path


def read_text(path: str | None, what: str = "text") -> str:
    """All of a file (or stdin) as text, strictly UTF-8."""
    with open_input(path, what) as (stream, name):
        return "".join(utf8.iter_utf8(stream, name))


def load_tokenizer(spec: str) -> Tokenizer:
    """A tokenizer from a folder written by ``train``, or a built-in one by name.

    A name that is both (a folder ``gpt2`` here) means the folder if it holds a tokenizer's
    files and the built-in if not, and a warning says which was taken; ``./gpt2`` is
    always the folder.
    """
    if spec in BUILTIN_TOKENIZERS and os.path.lexists(spec):
        use_folder = folder.holds_tokenizer_files(spec)
        choice = (f"the folder, not the built-in (give ./{spec} to say so)" if use_folder else
                  "the built-in, as the one here is not a tokenizer folder")
        warnings.warn(f"--tokenizer {spec}: a built-in tokenizer and a file or folder here "
                      f"have that name; using {choice}", stacklevel=2)
        if not use_folder:
            return BUILTIN_TOKENIZERS[spec]()
    if not os.path.exists(spec):
        if spec in BUILTIN_TOKENIZERS:
            return BUILTIN_TOKENIZERS[spec]()
        raise UsageError(
            f"--tokenizer {spec!r}: no such folder (give a folder written by "
            f"'{PROG} train', or one of: {', '.join(BUILTIN_TOKENIZERS)})"
        )
    if not os.path.isdir(spec):
        raise UsageError(f"--tokenizer {spec!r} is a file; give the folder that holds it")
    return folder.load_tokenizer_folder(spec)


def cmd_train(args: argparse.Namespace) -> int:
    from ..train import train_bpe

    # Everything that can be checked is checked before the corpus is read.
    pattern = NAMED_PATTERNS[args.pattern]
    typed = [terminal.argument_text(token) for token in args.special_tokens]  # UTF-8 in any locale
    specials = checked("--special-tokens: ", base.check_special_tokens, typed)
    wanted = checked("--vocab-size: ", base.merges_to_learn, args.vocab_size, specials)
    checked("", counting.corpus_paths, args.corpus)
    checked("--processes: ", workers.check_num_processes, args.processes)
    checked("--special-tokens: ", export.check_exportable, specials, pattern)
    args.claim = checked(f"--out {args.out!r}: ", folder.claim_output_folder, args.out, args.force,
                         args.corpus)

    start = time.perf_counter()
    vocab, merges = train_bpe(
        args.corpus, args.vocab_size, specials, pattern=pattern,
        num_processes=args.processes, progress=not args.quiet,
    )
    seconds = time.perf_counter() - start
    tokenizer = Tokenizer(vocab, merges, specials, pattern)
    folder.save_tokenizer_folder(tokenizer, args.claim)  # from here on errors say it is saved
    sample = corpus_head(args.corpus, SUMMARY_SAMPLE_BYTES)
    ratio = bytes_per_token(sample, tokenizer) if sample else 0.0
    short = "" if len(merges) == wanted else f" (asked for {wanted}: the corpus ran out of pairs)"
    sampled = sum(os.path.getsize(path) for path in args.corpus) > SUMMARY_SAMPLE_BYTES
    which = "the corpus's first 1 MB" if sampled else "the corpus"
    terminal.write_utf8(sys.stdout, f"learned {len(merges)} merges{short} in {seconds:.1f} s; "
               f"vocab size {len(vocab)}\nbytes per token on {which}: {ratio:.2f}\n"
               f"wrote {', '.join(folder.OUTPUT_FILES)} to {terminal.printable(args.out)}\n")
    return 0


def cmd_encode(args: argparse.Namespace) -> int:
    tokenizer = load_tokenizer(args.tokenizer)
    count, batch = 0, []
    with open_input(args.file) as (stream, name):
        policy = SPECIAL_POLICIES[args.special]
        ids = tokenizer.encode_iterable(utf8.iter_utf8(stream, name), **policy)
        for token_id in ids:
            count += 1
            if not args.count:
                batch.append(str(token_id))
                if len(batch) >= 8192:  # ids go out in batches, each but the first after a space
                    space = " " if count > len(batch) else ""
                    terminal.write_utf8(sys.stdout, space + " ".join(batch))
                    batch = []
    if args.count:
        terminal.write_utf8(sys.stdout, f"{count}\n")
    else:
        space = " " if batch and count > len(batch) else ""
        terminal.write_utf8(sys.stdout, space + " ".join(batch) + "\n")
    return 0


def cmd_decode(args: argparse.Namespace) -> int:
    tokenizer = load_tokenizer(args.tokenizer)
    words = args.ids or [read_text(None, "token ids").removeprefix("\ufeff")]  # Notepad's BOM
    text = tokenizer.decode(terminal.parse_token_ids(words, "arguments" if args.ids else "<stdin>"))
    text += "\n" if sys.stdout and sys.stdout.isatty() and not text.endswith("\n") else ""
    terminal.write_utf8(sys.stdout, text)
    return 0


def use_colour(stream, environ) -> bool:
    """Colour only on a terminal; ``NO_COLOR`` turns it off, ``FORCE_COLOR`` on (no-color.org)."""
    if environ.get("NO_COLOR"):
        return False
    return bool(environ.get("FORCE_COLOR")) or (hasattr(stream, "isatty") and stream.isatty())


def cmd_show(args: argparse.Namespace) -> int:
    tokenizer = load_tokenizer(args.tokenizer)
    if args.text is not None and args.file is not None:
        raise UsageError("give a FILE or --text, not both")
    text = terminal.argument_text(args.text) if args.text is not None else read_text(args.file)
    coloured = ansi_tokens(text, tokenizer, colour=use_colour(sys.stdout, os.environ))
    n_tokens = len(tokenizer.encode(text))
    terminal.write_utf8(sys.stdout, coloured + ("" if coloured.endswith("\n") else "\n"))
    n_bytes = len(utf8.replace_lone_surrogates(text).encode())  # what was encoded
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
    print(terminal.printable(f"{PROG}: error: {message}"), file=sys.stderr)
    return code


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning as one line on stderr, like an error: it names the file it is about (a
    corpus), but never a line of this package's code, which means nothing at a terminal.

    A warning about a data file names it with line 0 (see ``chunks.warn_about_long_chunks``);
    code always has a line number from 1. The file's name cannot tell: a corpus of Python
    source ends in ``.py`` too.
    """
    where = f"{filename}: " if lineno == 0 else ""
    print(terminal.printable(f"{PROG}: warning: {where}{message}"), file=file or sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit code instead of raising for user mistakes."""
    if sys.stderr is None:  # started with stderr closed: errors and bars go nowhere, not stdout
        sys.stderr = open(os.devnull, "w")  # for the rest of the process
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit_:  # --help, or argparse already printed a usage error
        return int(exit_.code or 0)
    if argv is None:  # this process is the command: a stop signal ends the work in run()
        ignore_stop_signals()  # and, once it is done and reported, no longer kills it
    with warnings.catch_warnings():
        warnings.showwarning = show_warning
        return run(args)


def run(args: argparse.Namespace) -> int:
    """Run the command, each failure turned into one line on stderr and an exit code."""
    try:
        with stop_signals_raise():
            return args.run(args)
    except UsageError as error:
        return fail(str(error), 2)
    except KeyboardInterrupt as error:
        code = error.exit_code if isinstance(error, Interrupted) else 130
        nothing = "; nothing was written" if args.command == "train" else ""
        return fail(f"interrupted{saved_note(args) or nothing}", code)
    except BrokenPipeError:  # `| head`: stop quietly; /dev/null takes Python's last flush
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except DisallowedSpecialError as error:  # its message names Python arguments, not options
        return fail(f"the input holds {quote(error.token)}: use --special all (an id) or none "
                    "(text)", 1)
    except utf8.InvalidUtf8Error as error:
        # Its own message suggests errors='replace', which is Python API advice.
        where = f"{error.source}: not valid UTF-8 at byte offset {error.offset}"
        return fail(f"{where} ({error.reason}); the input must be UTF-8 text", 1)
    except (ValueError, OSError) as error:  # the library's messages name file and place
        return fail(f"{error}{saved_note(args)}", 1)
    except MemoryError:  # its message is empty: say what was being read
        return fail(f"ran out of memory reading {inputs_of(args)}{saved_note(args)}", 1)
    except RecursionError:
        return fail(f"ran out of stack (something nested too deeply) in {inputs_of(args)}", 1)


def inputs_of(args: argparse.Namespace) -> str:
    """What a command reads, for a message that has nothing else to name."""
    named = [*getattr(args, "corpus", [])]
    if getattr(args, "tokenizer", None):
        named.append(f"the tokenizer {args.tokenizer}")
    if args.command in ("encode", "show") and getattr(args, "text", None) is None:
        named.append(getattr(args, "file", None) or "standard input")
    return " and ".join(named) or "the input"


def saved_note(args: argparse.Namespace) -> str:
    """"; the tokenizer is saved in OUT" once ``train`` has saved it, else ""."""
    claim = getattr(args, "claim", None)
    return f"; the tokenizer is saved in {args.out}" if claim is not None and claim.saved else ""
