"""The command line with unusual streams, locales and arguments, as real processes.

Closed or full standard streams, a broken pipe, a terminal on stdin, an ASCII-only
``PYTHONIOENCODING``, the C locale with Python's UTF-8 mode off, arguments that are not
UTF-8, and token ids written in every way a user might paste them. Whatever happens:
one line on stderr (never on stdout), an exit code, never a traceback, and a tokenizer
that was saved is said to be saved.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpe_course.course.data import english_prose
from bpe_course.formats.folder import OUTPUT_FILES

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX file descriptors")

COMMAND = [sys.executable, "-m", "bpe_course"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("c") / "corpus.txt"
    path.write_text(english_prose(20_000), encoding="utf-8")
    return path


def close_fd(fd: int):
    """A ``preexec_fn`` that starts the child with file descriptor ``fd`` closed."""
    return lambda: os.close(fd)


def run(args, *, stdin=subprocess.DEVNULL, env=None, python_flags=(), close=None, stdout=None):
    result = subprocess.run(
        [sys.executable, *python_flags, "-m", "bpe_course", *args],
        stdin=stdin, stdout=subprocess.PIPE if stdout is None else stdout,
        stderr=subprocess.PIPE if close != 2 else None, timeout=120,
        env={**os.environ, **(env or {})}, preexec_fn=None if close is None else close_fd(close),
    )
    return result


def no_traceback(result) -> str:
    err = (result.stderr or b"").decode("utf-8", errors="replace")
    assert "Traceback" not in err, err
    return err


# Closed and full streams ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [["decode", "--tokenizer", "gpt2", "15496"], ["encode", "--tokenizer", "gpt2", "{corpus}"],
     ["show", "--tokenizer", "gpt2", "--text", "Hello"]],
    ids=["decode", "encode", "show"],
)
def test_a_closed_stdout_is_an_error_not_a_traceback(args, corpus):
    result = run([arg.format(corpus=corpus) for arg in args], close=1, stdout=subprocess.DEVNULL)
    err = no_traceback(result)
    assert result.returncode == 1
    assert err == "bpe-course: error: cannot write the output: standard output is closed\n"


@pytest.mark.parametrize("command", ["decode", "encode", "show"])
def test_a_closed_stdin_is_an_error_not_a_traceback(command):
    result = run([command, "--tokenizer", "gpt2"], close=0, stdin=None)
    err = no_traceback(result)
    assert result.returncode == 2
    assert "standard input is closed" in err


def test_with_stderr_closed_errors_never_land_in_stdout_and_training_still_works(
    corpus, tmp_path
):
    result = run(["decode", "--tokenizer", "gpt2", "99999999"], close=2)
    assert result.returncode == 1
    assert result.stdout == b""  # the error went nowhere, not into the decoded text
    result = run(["train", str(corpus), "--vocab-size", "270", "--out", str(tmp_path / "t")],
                 close=2)  # progress bars with nowhere to go
    assert result.returncode == 0
    assert sorted(os.listdir(tmp_path / "t")) == sorted(OUTPUT_FILES)
    assert b"learned 14 merges" in result.stdout


@pytest.mark.parametrize(
    "args",
    [["decode", "--tokenizer", "gpt2", "15496"], ["show", "--tokenizer", "gpt2", "--text", "x"]],
    ids=["decode", "show"],
)
def test_a_full_disk_on_stdout_says_so(args):
    with open("/dev/full", "wb") as full:
        result = run(args, stdout=full)
    err = no_traceback(result)
    assert result.returncode == 1
    assert "cannot write the output: No space left on device" in err


def test_train_says_the_tokenizer_is_saved_when_only_the_summary_cannot_be_printed(
    corpus, tmp_path
):
    with open("/dev/full", "wb") as full:
        result = run(["train", str(corpus), "--vocab-size", "270", "--out",
                      str(tmp_path / "t"), "--quiet"], stdout=full)
    err = no_traceback(result)
    assert result.returncode == 1
    assert f"the tokenizer is saved in {tmp_path / 't'}" in err
    assert sorted(os.listdir(tmp_path / "t")) == sorted(OUTPUT_FILES)


@pytest.mark.parametrize(
    "args",
    [["decode", "--tokenizer", "gpt2"], ["show", "--tokenizer", "gpt2"],
     ["encode", "--tokenizer", "gpt2"]],
    ids=["decode", "show", "encode"],
)
def test_a_reader_that_goes_away_stops_the_command_quietly(args):
    """``bpe-course ... | head -c1``: the pipe breaks; Unix tools stop without a word."""
    ids = " ".join(["15496 11 995"] * 200_000).encode()
    text = ("Hello, world! " * 100_000).encode()
    process = subprocess.Popen([*COMMAND, *args], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()  # the reader is gone before the first byte
    _, err = process.communicate(ids if args[0] == "decode" else text, timeout=120)
    assert "Traceback" not in err.decode(errors="replace") and "Broken pipe" not in err.decode()
    assert process.returncode in (0, 1)


# Encodings and locales -----------------------------------------------------------------------


def test_an_ascii_only_stdout_does_not_fail_the_summary_after_saving(corpus, tmp_path):
    out = tmp_path / "tök"
    result = run(["train", str(corpus), "--vocab-size", "270", "--out", str(out), "--quiet"],
                 env={"PYTHONIOENCODING": "ascii"})
    no_traceback(result)
    assert result.returncode == 0
    assert f"to {out}".encode() in result.stdout  # written as UTF-8, as every output is


C_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


def test_in_the_c_locale_arguments_are_still_read_as_utf8(corpus, tmp_path):
    """With LC_ALL=C and UTF-8 mode off Python reads arguments as ASCII (the other bytes
    become surrogates); the bytes the user typed are UTF-8 all the same."""
    typed = "héllo «eos» ".encode() + b"\xff"  # the last byte is not UTF-8: read as U+FFFD
    args = ["show", "--tokenizer", "gpt2", "--text", typed]
    shown = run(args, env=C_LOCALE, python_flags=("-X", "utf8=0"))
    no_traceback(shown)
    assert shown.returncode == 0
    assert (shown.stdout, shown.stderr) == (run(args).stdout, b"8 tokens, 18 bytes\n")
    trained = run(["train", str(corpus), "--vocab-size", "270", "--special-tokens", "«eos»",
                   "--out", str(tmp_path / "t"), "--quiet"], env=C_LOCALE,
                  python_flags=("-X", "utf8=0"))
    no_traceback(trained)
    assert trained.returncode == 0, trained.stderr
    config = json.loads((tmp_path / "t" / "config.json").read_text(encoding="utf-8"))
    assert config["special_tokens"] == {"«eos»": 256}


def test_a_special_token_argument_that_is_not_utf8_is_named(corpus, tmp_path):
    """(``show --text`` reads such bytes as U+FFFD, as tiktoken reads lone surrogates; a
    special token must be exact text, so it is refused before training.)"""
    result = subprocess.run([*COMMAND, "train", str(corpus), "--vocab-size", "300", "--out",
                             "o", "--special-tokens", b"<\xff>"],
                            capture_output=True, timeout=60, cwd=tmp_path)
    err = no_traceback(result)
    assert result.returncode == 2
    assert "--special-tokens: special token '<\\udcff>' holds a lone surrogate" in err
    assert not (tmp_path / "o").exists()


# Token ids as a user pastes them -------------------------------------------------------------


@pytest.mark.parametrize(
    ("stdin", "args", "expected"),
    [
        (b"\xef\xbb\xbf15496 11", [], b"Hello,"),  # a file of ids saved by Notepad
        (b"15496\t11\r\n995\n0\n", [], b"Hello, world!"),
        (b"", ["15496 11", "995\t0"], b"Hello, world!"),  # "$(cat ids.txt)", quoted
    ],
    ids=["bom", "tabs-and-crlf", "spaces-inside-arguments"],
)
def test_ids_separated_by_any_whitespace_decode(stdin, args, expected):
    result = subprocess.run([*COMMAND, "decode", "--tokenizer", "gpt2", *args], input=stdin,
                            capture_output=True, timeout=60)
    no_traceback(result)
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected


def test_an_id_too_long_for_python_int_is_an_unknown_id():
    result = subprocess.run([*COMMAND, "decode", "--tokenizer", "gpt2", "9" * 5000],
                            capture_output=True, timeout=60)
    err = no_traceback(result)
    assert result.returncode == 1
    assert "unknown token id 9999999999" in err and "set_int_max_str_digits" not in err
    assert len(err) < 300


def test_a_terminal_on_stdin_gets_a_hint_instead_of_a_silent_wait():
    """``bpe-course decode --tokenizer gpt2`` with no ids waits for the keyboard: say so."""
    leader, follower = pty.openpty()
    process = subprocess.Popen([*COMMAND, "decode", "--tokenizer", "gpt2"], stdin=follower,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(follower)
    hint = b""
    deadline = time.time() + 60
    while b"\n" not in hint and time.time() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], 1)
        if ready:
            hint += os.read(process.stderr.fileno(), 1000)
    os.write(leader, b"15496 11\n\x04")  # the ids, then Ctrl-D
    out, err = process.communicate(timeout=60)
    os.close(leader)
    assert b"reading token ids from the terminal" in hint and b"Ctrl-D" in hint
    assert out == b"Hello,"
    assert process.returncode == 0


# Inputs that are not regular files -------------------------------------------------------------


@pytest.mark.parametrize("command", ["encode", "show"])
def test_a_pipe_given_as_a_file_is_read(command):
    """``bpe-course encode --tokenizer gpt2 <(zcat notes.gz)``: the shell passes a pipe as
    /dev/fd/N, which is not a regular file but reads like one (it was "not found")."""
    read_end, write_end = os.pipe()
    os.write(write_end, b"Hello, world!")
    os.close(write_end)
    result = subprocess.run([*COMMAND, command, "--tokenizer", "gpt2", f"/dev/fd/{read_end}"],
                            pass_fds=(read_end,), capture_output=True, timeout=60)
    os.close(read_end)
    no_traceback(result)
    assert result.returncode == 0, result.stderr
    if command == "encode":
        assert result.stdout == b"15496 11 995 0\n"


def test_dev_null_is_empty_text_and_a_folder_is_named_as_one(tmp_path):
    result = subprocess.run([*COMMAND, "encode", "--tokenizer", "gpt2", "/dev/null"],
                            capture_output=True, timeout=60)
    assert (result.returncode, result.stdout) == (0, b"\n")
    result = subprocess.run([*COMMAND, "encode", "--tokenizer", "gpt2", str(tmp_path)],
                            capture_output=True, timeout=60)
    assert result.returncode == 2
    assert f"{tmp_path} is a folder, not a file" in no_traceback(result)


def test_a_read_error_names_the_file():
    result = subprocess.run([*COMMAND, "encode", "--tokenizer", "gpt2", "/proc/self/mem"],
                            capture_output=True, timeout=60)
    assert result.returncode == 1
    assert "cannot read /proc/self/mem: Input/output error" in no_traceback(result)


# Generated special tokens through the whole of `train` ------------------------------------------

_special = st.text(st.characters(codec="utf-8"), min_size=1, max_size=6) | st.sampled_from(
    ["\udcff", "a\ud83d", "<|endoftext|>", "<|end", "\n", " ", "  ", "[", "é", "Ġ", "ĠĠ",
     "«eos»", ".*", "(?:", "\\", "\x00\x00", "\r\n", "<s><s>", "<s>"]
)


@given(specials=st.lists(_special, max_size=4), pattern=st.sampled_from(["gpt2", "gpt4"]))
def test_generated_special_tokens_train_or_get_one_line(specials, pattern, tmp_path_factory):
    """Whatever the special tokens (overlapping, regex characters, whitespace, one byte,
    lone surrogates): exit 0, or 2 with one error line, never a traceback; and when training
    succeeds, the folder loads and Hugging Face's tokenizer.json gives the same ids."""
    import contextlib
    import io

    from bpe_course.app.cli import main
    from bpe_course.formats.folder import load_tokenizer_folder

    work = tmp_path_factory.mktemp("fuzz")
    corpus = work / "c.txt"
    corpus.write_text(("hello world <|endoftext|> a b\tc\r\nd" + "".join(specials)) * 20,
                      encoding="utf-8", errors="surrogatepass")
    args = ["train", str(corpus), "--vocab-size", "300", "--pattern", pattern,
            "--out", str(work / "t"), "--quiet", "--processes", "1"]
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(args + (["--special-tokens", *specials] if specials else []))
    assert "Traceback" not in err.getvalue()
    assert code in (0, 2), err.getvalue()
    if code:  # one line, or argparse's usage and one line (a token that looks like an option)
        assert err.getvalue().count("\n") == 1 or err.getvalue().startswith("usage:")
        return
    tokenizer = load_tokenizer_folder(str(work / "t"))
    text = "".join(specials) + " hello <|endoftext|> world " + "".join(reversed(specials))
    ids = tokenizer.encode(text)
    assert tokenizer.decode(ids) == text
    assert tokenizer.to_hf().encode(text).ids == ids
