"""The command line: ``bpe-course train | encode | decode | show`` (or ``python -m bpe_course``).

Examples::

    bpe-course train corpus.txt --vocab-size 10000 --special-tokens "<|endoftext|>" \\
        --pattern gpt4 --out my_tokenizer
    bpe-course encode --tokenizer my_tokenizer notes.txt > ids.txt
    bpe-course encode --tokenizer gpt2 --output tokens.npy corpus/*.txt
    bpe-course decode --tokenizer my_tokenizer < ids.txt
    bpe-course show --tokenizer gpt2 --text "Hello, world!"

``--tokenizer`` takes a folder written by ``train``, ``gpt2``/``cl100k_base``/``o200k_base``,
an open model's name (``llama3``, ``qwen2.5``, ... see :mod:`bpe_course.models`), or a file: a
Hugging Face ``tokenizer.json`` or a SentencePiece ``.model``.
This module only parses arguments and presents results; the work is the library's.
Mistakes get one line on stderr, never a traceback, also when the input is endless or
memory runs out (the line names the input and how much of it was read). Text from the
input reaches a terminal with its control characters drawn (``\\x1b``), never obeyed:
``show`` and messages always draw them, ``decode`` when its output is a terminal (as
``less`` does); into a file or a pipe ``decode`` writes the text exactly (as ``cat``
does). ``encode`` and ``decode`` stream: what they refuse half-way, they refuse saying how
much output had already been written. Exit codes: 0 ok, 1 bad input, bad
tokenizer files or output that cannot be written, 2 a wrong command line (unknown option,
missing file, impossible vocab size, unusable --out, closed stdin), 128 + the signal when
stopped (130 Ctrl-C, 143 SIGTERM, 129 a closed terminal). Arguments are read as UTF-8.
"""

from __future__ import annotations

import argparse
import codecs
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any

from .. import base, models, openai, utf8
from ..course.data import corpus_head
from ..course.viz import ansi_tokens, bytes_per_token, draw_controls
from ..formats import arrays, export, folder
from ..formats.hf_json import from_tokenizer_json
from ..formats.sentencepiece import load_sentencepiece
from ..pretokens import NAMED_PATTERNS
from ..safety.interrupts import Interrupted, ignore_stop_signals, stop_signals_raise
from ..safety.quoting import quote
from ..safety.specials import SPECIAL_POLICIES, DisallowedSpecialError
from ..speed import counting, workers
from ..speed.wordtable import LongPretokenError, check_max_pretoken_bytes
from ..tokenizer import Tokenizer
from . import terminal

PROG = "bpe-course"

#: Tokenizers that ``--tokenizer`` knows by name (they need no folder).
BUILTIN_TOKENIZERS = {**openai.BY_NAME, **{name: partial(models.open_model, name)
                                             for name in models.OPEN_MODELS}}

#: ``train`` measures bytes per token on at most this many bytes of the corpus.
SUMMARY_SAMPLE_BYTES = 1_000_000


class UsageError(Exception):
    """The command line asks for something impossible (exit code 2)."""


class UnreadableInput(ValueError):
    """The input cannot be used as it is (exit code 1); the message names it."""


class Parser(argparse.ArgumentParser):
    """argparse, whose usage errors may quote arguments that are not valid UTF-8, and whose
    help fails loudly when it cannot be written (argparse drops that error silently)."""

    def _print_message(self, message: str, file=None) -> None:
        if message:
            terminal.write_utf8(file or sys.stderr, terminal.printable(message))


def checked(label: str, check: Callable[..., Any], *args: object) -> Any:
    """``check(*args)``, with a ValueError or OSError turned into a usage error (exit 2)."""
    try:
        return check(*args)
    except (OSError, ValueError, TypeError) as error:
        raise UsageError(f"{label}{error}") from None


@contextmanager
def open_input(path: str | None, what: str = "text"):
    """The binary stream to read (a file, or stdin for ``None``/``-``) and its name.

    The stream counts the bytes read from it, and running out of memory while it is read
    (a text that never ends, or one pretoken of gigabytes) is one line naming the input and
    how much of it was read, as ``grep`` says "memory exhausted".
    """
    if path is None or path == "-":
        if sys.stdin is None:
            raise UsageError(f"standard input is closed; give the {what} as arguments or a file")
        if sys.stdin.isatty():
            print(f"{PROG}: reading {what} from the terminal; end with Ctrl-D", file=sys.stderr)
        with out_of_memory_named(terminal.MeteredReader(sys.stdin.buffer), "<stdin>") as named:
            yield named
        return
    if not os.path.exists(path):  # pipes (``<(zcat notes.gz)``) and /dev/null are fine
        raise UsageError(f"input file not found: {path}")
    if os.path.isdir(path):
        raise UsageError(f"{path} is a folder, not a file")
    with open(path, "rb") as file, out_of_memory_named(terminal.MeteredReader(file), path) as named:
        yield named


@contextmanager
def out_of_memory_named(stream: terminal.MeteredReader, name: str):
    """``(stream, name)``; a ``MemoryError`` in the block becomes :class:`UnreadableInput`."""
    try:
        yield stream, name
    except MemoryError:
        raise UnreadableInput(
            f"{name}: ran out of memory after reading {stream.bytes_read:,} bytes of it"
        ) from None


def load_tokenizer(spec: str) -> Tokenizer:
    """A tokenizer from a folder written by ``train``, a ``tokenizer.json`` or SentencePiece
    ``.model`` file, or a built-in one by name."""
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
            f"--tokenizer {spec!r}: no such folder or file (give a folder written by "
            f"'{PROG} train', a tokenizer.json, a SentencePiece .model, or one of: "
            f"{', '.join(BUILTIN_TOKENIZERS)})"
        )
    if os.path.isdir(spec):
        return folder.load_tokenizer_folder(spec)
    if spec.endswith(".json"):
        return from_tokenizer_json(spec)
    return load_sentencepiece(spec)  # says so when the file is not a SentencePiece model


def cmd_train(args: argparse.Namespace) -> int:
    from ..train import train_bpe

    # Everything that can be checked is checked before the corpus is read.
    pattern = NAMED_PATTERNS[args.pattern]
    typed = [terminal.argument_text(token) for token in args.special_tokens]  # UTF-8 in any locale
    specials = checked("--special-tokens: ", base.check_special_tokens, typed)
    wanted = checked("--vocab-size: ", base.merges_to_learn, args.vocab_size, specials)
    checked("", counting.corpus_paths, args.corpus)
    checked("--processes: ", workers.check_num_processes, args.processes)
    checked("--max-pretoken-bytes: ", check_max_pretoken_bytes, args.max_pretoken_bytes)
    checked("--special-tokens: ", export.check_exportable, specials, pattern)
    args.claim = checked(f"--out {args.out!r}: ", folder.claim_output_folder, args.out, args.force,
                         args.corpus)

    start = time.perf_counter()
    vocab, merges = train_bpe(
        args.corpus, args.vocab_size, specials, pattern=pattern,
        num_processes=args.processes, progress=not args.quiet,
        max_pretoken_bytes=args.max_pretoken_bytes,
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
    if args.output is not None:
        return cmd_encode_array(args)
    if len(args.file) > 1:
        raise UsageError(f"{len(args.file)} files given: encode prints the ids of one text; "
                         "give --output tokens.npy to encode several into one array")
    if args.dtype or args.no_separator or args.processes or args.quiet:
        raise UsageError("--dtype, --no-separator, --processes and --quiet go with --output")
    tokenizer = load_tokenizer(args.tokenizer)
    count, batch = 0, []
    with open_input(args.file[0] if args.file else None) as (stream, name):
        policy = SPECIAL_POLICIES[args.special]
        try:
            ids = tokenizer.encode_iterable(utf8.iter_utf8(stream, name), **policy)
        except NotImplementedError:  # no safe place to cut a stream (SentencePiece): read it all
            ids = iter(tokenizer.encode("".join(utf8.iter_utf8(stream, name)), **policy))
        try:
            for token_id in ids:
                count += 1
                if not args.count:
                    batch.append(str(token_id))
                    if len(batch) >= 8192:  # ids go out in batches, each but the first after
                        space = " " if count > len(batch) else ""  # a space
                        terminal.write_utf8(sys.stdout, space + " ".join(batch))
                        batch = []
        except DisallowedSpecialError as error:  # found after the ids before it went out
            written = 0 if args.count else count - len(batch)
            raise UnreadableInput(
                f"{name}: the input holds {error.token!r}: use --special all (an id) or none "
                f"(text){already_written(written, 'ids')}"
            ) from None
    if args.count:
        terminal.write_utf8(sys.stdout, f"{count}\n")
    else:
        space = " " if batch and count > len(batch) else ""
        terminal.write_utf8(sys.stdout, space + " ".join(batch) + "\n")
    return 0


def cmd_encode_array(args: argparse.Namespace) -> int:
    """``encode --output tokens.npy FILES...``: one array of ids, on every core."""
    if not args.file:
        raise UsageError("--output needs the text files to encode (stdin is not read)")
    for path in args.file:
        if not os.path.exists(path):
            raise UsageError(f"input file not found: {path}")
        if os.path.isdir(path):
            raise UsageError(f"{path} is a folder, not a file")
    if args.processes is not None:
        checked("--processes: ", workers.check_num_processes, args.processes)
    tokenizer = load_tokenizer(args.tokenizer)
    result = arrays.encode_to_array(
        tokenizer, args.file, args.output, dtype=args.dtype,
        separate_documents=False if args.no_separator else None,
        num_processes=args.processes, progress=not args.quiet)
    rate = result.text_bytes / max(result.seconds, 1e-9)
    print(f"{result.path}: {result.tokens:,} tokens ({result.dtype}) from {result.documents} "
          f"file(s), {result.text_bytes:,} bytes in {result.seconds:.1f} s "
          f"({rate / 1e6:.1f} MB/s, {result.tokens / max(result.seconds, 1e-9):,.0f} tokens/s)",
          file=sys.stderr)
    return 0


def cmd_decode(args: argparse.Namespace) -> int:
    """Ids in, text out, as they come: the input is read a block at a time, a word that is
    not an id is refused as soon as it is read, and the text of each block is written
    before the next is read. To a terminal, control characters are drawn (``\\x1b``), as
    ``less`` does; to a file or a pipe the text is written exactly, as ``cat`` does."""
    tokenizer = load_tokenizer(args.tokenizer)
    if args.ids:
        return write_decoded(tokenizer, [" ".join(args.ids)], "arguments")
    with open_input(None, "token ids") as (stream, name):
        return write_decoded(tokenizer, without_bom(utf8.iter_utf8(stream, name)), name)


def without_bom(texts: Iterator[str]) -> Iterator[str]:
    """The texts of a stream, without the byte order mark Notepad puts first."""
    first = next(texts, "")
    yield first.removeprefix("\ufeff")
    yield from texts


def write_decoded(tokenizer: Tokenizer, texts: Iterable[str], where: str) -> int:
    """Write the text of the ids in ``texts`` block by block; an error says how many ids'
    text was already written."""
    terminal_out = bool(sys.stdout) and sys.stdout.isatty()
    decoder = codecs.getincrementaldecoder("utf-8")("replace")  # as Tokenizer.decode does
    written, last = 0, ""
    try:
        for ids in terminal.iter_token_ids(texts, where):
            try:
                data, known = tokenizer.decode_bytes(ids), len(ids)
            except KeyError:  # an unknown id: first write the text of those before it
                known = next(n for n, i in enumerate(ids) if i not in tokenizer.vocab)
                data = tokenizer.decode_bytes(ids[:known])
            text = decoder.decode(data)
            terminal.write_utf8(sys.stdout, draw_controls(text) if terminal_out else text)
            written, last = written + known, text[-1:] or last
            if known < len(ids):
                tokenizer.decode_single_token_bytes(ids[known])  # raises, naming the id
        text = decoder.decode(b"", final=True)
    except utf8.InvalidUtf8Error:
        raise
    except ValueError as error:
        if terminal_out and last not in ("", "\n"):
            terminal.write_utf8(sys.stdout, "\n")  # the message starts on a line of its own
        raise UnreadableInput(f"{error}{already_written(written, 'ids', 'the text of ')}") from None
    newline = "\n" if terminal_out and not (text or last).endswith("\n") else ""
    terminal.write_utf8(sys.stdout, text + newline)
    return 0


def already_written(count: int, things: str, what: str = "") -> str:
    """The end of an error that stopped output half-way: how much of it went out."""
    return f"; {what}{count:,} {things} before it had already been written" if count else ""


def use_colour(stream, environ) -> bool:
    """Colour only on a terminal; ``NO_COLOR`` turns it off, ``FORCE_COLOR`` on (no-color.org)."""
    if environ.get("NO_COLOR"):
        return False
    return bool(environ.get("FORCE_COLOR")) or (hasattr(stream, "isatty") and stream.isatty())


def cmd_show(args: argparse.Namespace) -> int:
    tokenizer = load_tokenizer(args.tokenizer)
    if args.text is not None and args.file is not None:
        raise UsageError("give a FILE or --text, not both")
    if args.text is not None:
        text = terminal.argument_text(args.text)
        coloured = ansi_tokens(text, tokenizer, colour=use_colour(sys.stdout, os.environ))
    else:
        with open_input(args.file) as (stream, name):
            text = "".join(utf8.iter_utf8(stream, name))
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
    train.add_argument("--max-pretoken-bytes", type=int, default=None, metavar="N",
                       help="cut pretokens longer than N bytes into pieces of N bytes (default: "
                       "refuse any over 32 MiB; a run of one letter is a single pretoken)")
    train.add_argument("--quiet", action="store_true", help="no progress bars")
    train.set_defaults(run=cmd_train)

    tokenizer_help = (f"a folder written by 'train', a tokenizer.json or SentencePiece .model "
                      f"file, or one of {', '.join(BUILTIN_TOKENIZERS)}")

    encode = commands.add_parser(
        "encode", help="print the token ids of a text, or write files' ids as a .npy array")
    encode.add_argument("--tokenizer", required=True, metavar="DIR", help=tokenizer_help)
    encode.add_argument("file", nargs="*", metavar="FILE",
                        help="UTF-8 text (default: stdin); several with --output")
    encode.add_argument("--output", metavar="FILE.npy", default=None,
                        help="write the ids of FILEs as one NumPy array (np.load reads it), each "
                        "file a document followed by the end-of-text id if the tokenizer has one")
    encode.add_argument("--dtype", choices=["uint16", "uint32"], default=None,
                        help="with --output: the ids' type (default: uint16 when every id fits)")
    encode.add_argument("--no-separator", action="store_true",
                        help="with --output: no end-of-text id between files")
    encode.add_argument("--processes", type=int, default=None, metavar="K",
                        help="with --output: worker processes (default: every core)")
    encode.add_argument("--quiet", action="store_true", help="with --output: no progress bar")
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
    try:
        print(terminal.printable(f"{PROG}: error: {message}"), file=sys.stderr, flush=True)
    except OSError:  # stderr full or gone too: the exit code is all that is left to say it
        pass
    return code


def reader_gone() -> int:
    """The reader of stdout went away (``| head``): stop quietly, exit code 1; /dev/null
    takes Python's last flush, which would otherwise fail with a traceback."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 1


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
    except BrokenPipeError:  # `--help | head -1`
        return reader_gone()
    except terminal.OutputError as error:  # `--help > /dev/full`: say so, as commands do
        return fail(str(error), 1)
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
        writes = args.command == "train" or getattr(args, "output", None) is not None
        nothing = "; nothing was written" if writes else ""
        return fail(f"interrupted{saved_note(args) or nothing}", code)
    except BrokenPipeError:  # `| head`: stop quietly
        return reader_gone()
    except DisallowedSpecialError as error:  # its message names Python arguments, not options
        return fail(f"the input holds {quote(error.token)}: use --special all (an id) or none "
                    "(text)", 1)
    except LongPretokenError as error:  # its own message names the Python argument
        return fail(f"the longest pretoken is {error.length:,} bytes ({error.preview}, "
                    f"{error.count:,} time(s)), over the {error.limit:,} bytes 'train' takes by "
                    "default: each merge inside it can make a token nearly as long; use "
                    "--max-pretoken-bytes N to cut longer pretokens into pieces of at most N "
                    "bytes (e.g. 1000000), or an N above its length to train on it whole", 1)
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
        given = getattr(args, "file", None)
        named.append(" and ".join(given) if given and isinstance(given, list)
                     else given or "standard input")
    return " and ".join(named) or "the input"


def saved_note(args: argparse.Namespace) -> str:
    """"; the tokenizer is saved in OUT" once ``train`` has saved it, else ""."""
    claim = getattr(args, "claim", None)
    return f"; the tokenizer is saved in {args.out}" if claim is not None and claim.saved else ""
