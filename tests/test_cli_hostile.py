"""The command line against hostile input and careless use: endless streams, text that
tries to drive the terminal, output that cannot be written, refusals after output began.

Whatever happens: one line on stderr naming the input and what went wrong, an exit code,
never a traceback, and never a control character from the input reaching a terminal.
"""

from __future__ import annotations

import contextlib
import io
import os
import pty
import re
import resource
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpe_course.app.cli import main, write_decoded
from bpe_course.app.terminal import iter_token_ids
from bpe_course.base import ENDOFTEXT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX streams")

COMMAND = [sys.executable, "-m", "bpe_course"]

#: The address space a child may use in the tests that make it run out of memory: enough
#: to start and load GPT-2's tables, little enough to run out in seconds (and to keep a
#: broken version from taking the shared machine's memory).
MEMORY_LIMIT = 600 << 20

#: What a hostile text puts in: set the title, ring, paint red, go back to the line's
#: start and one column left.
HOSTILE = "a\x1b]0;pwned\x07\x1b[31mRED\r\b"
OBEYED = ("\x1b", "\x07", "\r", "\b")

#: The escape codes ``show`` draws with: reset, underline, and black on a background.
OUR_COLOURS = re.compile(r"\x1b\[(?:0|4|30;48;5;\d+)m")


def limited_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_limited(args: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*COMMAND, *args], capture_output=True, timeout=300,
                          preexec_fn=limited_memory, **kwargs)


def one_error_line(err: bytes) -> str:
    text = err.decode("utf-8", errors="replace")
    assert "Traceback" not in text and "MemoryError" not in text, text[-2000:]
    errors = [line for line in text.splitlines() if line.startswith("bpe-course: error: ")]
    assert len(errors) == 1, text[-2000:]
    return errors[0]


@pytest.fixture
def cli(capsysbinary, monkeypatch):
    """``main(args)`` in this process with ``stdin``: (exit code, stdout bytes, stderr)."""

    def run(args: list[str], stdin: bytes = b""):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
        code = main(args)
        out, err = capsysbinary.readouterr()
        return code, out, err.decode("utf-8")

    return run


# Endless input and memory ---------------------------------------------------------------------


def test_encoding_an_endless_pretoken_names_the_input_and_what_ran_out():
    result = run_limited(["encode", "--tokenizer", "gpt2", "--count", "/dev/zero"])
    assert result.returncode == 1
    line = one_error_line(result.stderr)
    assert line.startswith("bpe-course: error: /dev/zero: ran out of memory after reading ")
    assert line.endswith(" bytes of it")


def test_show_of_an_endless_file_names_it_too():
    result = run_limited(["show", "--tokenizer", "gpt2", "/dev/zero"])
    assert result.returncode == 1
    assert "/dev/zero: ran out of memory after reading" in one_error_line(result.stderr)


def test_running_out_of_memory_while_encoding_stdin_says_how_much_was_read(cli, monkeypatch):
    from bpe_course.tokenizer import Tokenizer

    def fails_after_the_first_block(self, texts, **policy):
        next(iter(texts))
        raise MemoryError

    monkeypatch.setattr(Tokenizer, "encode_iterable", fails_after_the_first_block)
    code, out, err = cli(["encode", "--tokenizer", "gpt2"], stdin=b"x" * 5000)
    assert code == 1 and out == b""
    assert err == "bpe-course: error: <stdin>: ran out of memory after reading 5,000 bytes of it\n"


def test_decode_refuses_endless_zero_bytes_at_once():
    """It read all of stdin first: a MemoryError traceback after gigabytes."""
    with open("/dev/zero", "rb") as zeros:
        result = run_limited(["decode", "--tokenizer", "gpt2"], stdin=zeros)
    assert result.returncode == 1
    line = one_error_line(result.stderr)
    assert line.startswith("bpe-course: error: <stdin>: '\\x00\\x00")
    assert line.endswith("... is not a token id (word 1; digits 0-9 only)")
    assert len(line) < 200


def test_decode_refuses_a_bad_word_before_its_input_ends():
    process = subprocess.Popen([*COMMAND, "decode", "--tokenizer", "gpt2"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    process.stdin.write(b"15496 11 hello ")  # and the input stays open
    process.stdin.flush()
    try:
        returncode = process.wait(timeout=60)
    finally:
        process.kill()
        process.stdin.close()
    assert returncode == 1
    assert one_error_line(process.stderr.read()) == (
        "bpe-course: error: <stdin>: 'hello' is not a token id (word 3; digits 0-9 only); "
        "the text of 2 ids before it had already been written"
    )
    assert process.stdout.read() == b"Hello,"


def test_decode_writes_each_block_of_text_as_its_ids_arrive():
    process = subprocess.Popen([*COMMAND, "decode", "--tokenizer", "gpt2"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    try:
        process.stdin.write(b"15496 11 ")
        process.stdin.flush()
        ready, _, _ = select.select([process.stdout], [], [], 60)
        first = os.read(process.stdout.fileno(), 100) if ready else b""
        process.stdin.write(b"995 0\n")
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert first == b"Hello,"
    assert first + out == b"Hello, world!" and process.returncode == 0, err


@pytest.mark.parametrize(
    ("ids", "expected"),
    [(["0" * 101], "word 1 has over 100 digits, too many for a token id"),
     (["9" * 30, "1"], "unknown token id 99999999999999999999... (30 digits)"),
     (["1", "9" * 30], "unknown token id 99999999999999999999... (more than 20 digits)")],
)
def test_absurd_ids_are_refused_without_being_held(cli, ids, expected):
    code, _, err = cli(["decode", "--tokenizer", "gpt2", *ids])
    assert code == 1 and expected in err


# Control characters never reach the terminal ---------------------------------------------------


@pytest.mark.parametrize("colour", ["1", ""])
def test_show_draws_control_characters_instead_of_sending_them(cli, monkeypatch, colour):
    monkeypatch.setenv("FORCE_COLOR", colour)
    monkeypatch.delenv("NO_COLOR", raising=False)
    code, out, _ = cli(["show", "--tokenizer", "gpt2", "--text", HOSTILE])
    assert code == 0
    text = out.decode()
    ours = OUR_COLOURS.sub("", text)
    assert not any(char in ours for char in OBEYED), repr(text)
    assert "\\x1b" in ours and "\\x07" in ours and "\\r" in ours and "\\x08" in ours


def test_show_draws_control_characters_from_a_file_too(cli, tmp_path):
    (tmp_path / "t.txt").write_text(HOSTILE + "\x85\x7f", encoding="utf-8")
    code, out, _ = cli(["show", "--tokenizer", "gpt2", str(tmp_path / "t.txt")])
    assert code == 0
    assert out.decode() == (
        "a|\\x1b|]|0|;|p|wn|ed|\\x07|\\x1b|[|31|m|RED|\\r|\\x08|\\x85[c2|85]|\\x7f\n"
    )


def test_an_error_that_echoes_a_file_name_draws_its_control_characters(cli):
    code, _, err = cli(["encode", "--tokenizer", "gpt2", "no\x1b]0;pwned\x07such"])
    assert code == 2
    assert err == "bpe-course: error: input file not found: no\\x1b]0;pwned\\x07such\n"


def test_an_error_that_echoes_an_id_draws_its_control_characters(cli):
    code, _, err = cli(["decode", "--tokenizer", "gpt2"], stdin=b"15496 \x1b[2J")
    assert code == 1 and "\x1b" not in err and "'\\x1b[2J'" in err


def decode_on_a_terminal(ids: str) -> bytes:
    """``bpe-course decode IDS`` with stdout on a pseudo-terminal: what the screen gets."""
    leader, follower = pty.openpty()
    process = subprocess.Popen([*COMMAND, "decode", "--tokenizer", "gpt2", ids],
                               stdout=follower, stderr=subprocess.PIPE)
    os.close(follower)
    seen = b""
    deadline = time.time() + 60
    while time.time() < deadline:
        ready, _, _ = select.select([leader], [], [], 1)
        if ready:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the other end closed
                break
            if not chunk:
                break
            seen += chunk
        elif process.poll() is not None:
            break
    process.wait(timeout=60)
    os.close(leader)
    return seen


@pytest.fixture(scope="module")
def hostile_ids(gpt2_tokenizer) -> str:
    return " ".join(map(str, gpt2_tokenizer.encode(HOSTILE + "\n")))


def test_decode_to_a_terminal_draws_control_characters(hostile_ids):
    """As ``less`` does: on a terminal the text is shown, not obeyed."""
    screen = decode_on_a_terminal(hostile_ids)
    assert not any(char.encode() in screen for char in ("\x1b", "\x07", "\x08"))
    assert screen.replace(b"\r\n", b"\n") == b"a\\x1b]0;pwned\\x07\\x1b[31mRED\\r\\x08\n"


def test_decode_into_a_pipe_writes_the_text_exactly(hostile_ids):
    """As ``cat`` does: into a file or a pipe, decode's output is the text itself."""
    result = subprocess.run([*COMMAND, "decode", "--tokenizer", "gpt2", hostile_ids],
                            capture_output=True, timeout=60)
    assert result.returncode == 0 and result.stdout == (HOSTILE + "\n").encode()


# Output that cannot be written, refusals after output began -------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["--help"], ["decode", "--help"]])
def test_help_into_a_full_disk_fails_and_says_so(args):
    with open("/dev/full", "wb") as full:
        result = subprocess.run([*COMMAND, *args], stdout=full, stderr=subprocess.PIPE,
                                timeout=60)
    assert result.returncode == 1
    assert one_error_line(result.stderr) == (
        "bpe-course: error: cannot write the output: No space left on device"
    )


def test_help_still_works(capsys):
    assert main(["--help"]) == 0
    assert "usage: bpe-course" in capsys.readouterr().out


@pytest.fixture(scope="module")
def special_late(tmp_path_factory) -> Path:
    """A megabyte of text, then a special token."""
    path = tmp_path_factory.mktemp("late") / "f.txt"
    path.write_text("hello world " * 100_000 + ENDOFTEXT + " tail", encoding="utf-8")
    return path


def test_a_refused_special_token_says_how_many_ids_were_already_written(cli, special_late):
    code, out, err = cli(["encode", "--tokenizer", "gpt2", "--special", "raise",
                          str(special_late)])
    written = len(out.split())
    assert code == 1 and written > 0
    assert err == (
        f"bpe-course: error: {special_late}: the input holds {ENDOFTEXT!r}: use --special all "
        f"(an id) or none (text); {written:,} ids before it had already been written\n"
    )


def test_a_refused_special_token_before_any_output_says_nothing_was_written(cli):
    code, out, err = cli(["encode", "--tokenizer", "gpt2", "--special", "raise"],
                         stdin=f"hi {ENDOFTEXT}".encode())
    assert code == 1 and out == b""
    assert err.endswith(f"the input holds {ENDOFTEXT!r}: use --special all (an id) or none "
                        "(text)\n")


def test_a_special_token_with_count_reports_no_output(cli, special_late):
    code, out, err = cli(["encode", "--tokenizer", "gpt2", "--special", "raise", "--count",
                          str(special_late)])
    assert code == 1 and out == b"" and "already been written" not in err


# Streaming gives what reading everything gave -----------------------------------------------


def cut(text: str, places: list[int]) -> list[str]:
    """``text`` in pieces, cut at ``places`` (positions, in any order, repeats allowed)."""
    edges = sorted({0, len(text), *(place % (len(text) + 1) for place in places)})
    return [text[start:end] for start, end in zip(edges, edges[1:])]


@given(
    words=st.lists(st.sampled_from(["0", "11", "995", "15496", "50256", "007", "x", "1x", "²",
                                    "١٢", "9" * 21, "0" * 101]), max_size=12),
    spaces=st.lists(st.sampled_from([" ", "\t", "\r\n", "\x1c", "\u2028", "\u3000"]),
                    min_size=1, max_size=4),
    places=st.lists(st.integers(0, 10_000), max_size=6),
)
def test_ids_read_in_pieces_are_the_ids_of_the_whole(words, spaces, places):
    """The same ids come out before the same refusal (a piece may end inside a bad word,
    which is then refused sooner, and named by what was read of it)."""
    text = "".join(word + spaces[n % len(spaces)] for n, word in enumerate(words))
    whole, whole_error = read_ids([text])
    pieces, pieces_error = read_ids(cut(text, places))
    assert (pieces, pieces_error) == (whole, whole_error)
    if not whole_error:
        assert whole == [int(word) for word in text.split()]


def read_ids(texts: list[str]) -> tuple[list[int], str]:
    """The ids ``iter_token_ids`` gives before it refuses, and the word it refuses ("" if
    it does not)."""
    ids: list[int] = []
    try:
        for block in iter_token_ids(texts, "t"):
            ids += block
    except ValueError as error:
        return ids, re.sub(r"'[^']*'(\.\.\.)?|\((\d+|more than 20) digits\)", "", str(error))
    return ids, ""


@given(ids=st.lists(st.integers(0, 50256), max_size=30),
       places=st.lists(st.integers(0, 10_000), max_size=6))
def test_decoding_in_pieces_gives_the_text_of_the_whole(gpt2_tokenizer, ids, places):
    """Tokens that end inside a character are joined across pieces as by decode()."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        write_decoded(gpt2_tokenizer, cut(" ".join(map(str, ids)), places), "t")
    assert out.getvalue() == gpt2_tokenizer.decode(ids)
