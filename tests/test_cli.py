"""The command line, in-process (``main([...])``) and as ``python -m bpe_course``."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tiktoken
from hypothesis import given
from hypothesis import strategies as st
from tiktoken.load import load_tiktoken_bpe
from tokenizers import Tokenizer as HFTokenizer

from bpe_course import GPT4_PATTERN, Tokenizer
from bpe_course import train as train_module
from bpe_course.app.cli import load_tokenizer, main
from bpe_course.base import ENDOFTEXT
from bpe_course.course.data import english_prose
from bpe_course.formats.folder import OUTPUT_FILES
from bpe_course.speed import streaming

SAMPLE = "Hello   world, it's 2024!\r\n\tdef f(x): return x**2  # 你好 🙂<|endoftext|>bye\n"
#: The environment with colour forced on (and NO_COLOR, which would win, removed).
COLOUR_ENV = {**{k: v for k, v in os.environ.items() if k != "NO_COLOR"}, "FORCE_COLOR": "1"}
ANSI_CODE = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text(english_prose(60_000).replace("\n\n\n", ENDOFTEXT), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def trained_dir(corpus, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("trained") / "tok"
    args = ["train", str(corpus), "--vocab-size", "500", "--special-tokens", ENDOFTEXT,
            "--pattern", "gpt4", "--processes", "1", "--out", str(out), "--quiet"]
    assert main(args) == 0
    return out


def run(args: list[str], stdin: bytes = b"", capsysbinary=None, monkeypatch=None):
    """``main(args)`` with ``stdin``; returns (exit code, stdout bytes, stderr text)."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    code = main(args)
    out, err = capsysbinary.readouterr()
    return code, out, err.decode("utf-8")


@pytest.fixture
def cli(capsysbinary, monkeypatch):
    return lambda args, stdin=b"": run(args, stdin, capsysbinary, monkeypatch)


def python_m(*args: str, stdin: bytes = b"", cwd: Path | None = None):
    return subprocess.run(
        [sys.executable, "-m", "bpe_course", *args],
        input=stdin, capture_output=True, cwd=cwd, timeout=120,
        env=COLOUR_ENV,  # `show` colours a pipe only when told to
    )


def assert_one_line_error(err: str) -> None:
    assert err.startswith("bpe-course: error: ") or "usage:" in err
    assert "Traceback" not in err


# Train ------------------------------------------------------------------------------------


def test_train_writes_files_that_every_library_loads(trained_dir):
    assert sorted(p.name for p in trained_dir.iterdir()) == sorted(OUTPUT_FILES)
    config = json.loads((trained_dir / "config.json").read_text())
    assert config == {"format": "bpe-course tokenizer", "pattern": "gpt4",
                      "pattern_regex": GPT4_PATTERN, "special_tokens": {ENDOFTEXT: 256},
                      "vocab_size": 500, "merges": 243}
    ours = Tokenizer.from_files(trained_dir / "vocab.json", trained_dir / "merges.txt",
                                [ENDOFTEXT], GPT4_PATTERN)
    assert load_tokenizer(str(trained_dir)).vocab == ours.vocab
    hf = HFTokenizer.from_file(str(trained_dir / "tokenizer.json"))
    encoding = tiktoken.Encoding(
        name="trained", pat_str=GPT4_PATTERN,
        mergeable_ranks=load_tiktoken_bpe(str(trained_dir / "tokenizer.tiktoken")),
        special_tokens=ours.special_tokens,
    )
    for text in (SAMPLE, english_prose(20_000)):
        ids = ours.encode(text)
        assert hf.encode(text).ids == ids
        assert encoding.encode(text, allowed_special="all") == ids
    assert (trained_dir / "vocab.json").stat().st_mode & 0o044  # readable, not 0600


def test_train_prints_a_summary(corpus, tmp_path, cli):
    code, out, err = cli(["train", str(corpus), "--vocab-size", "300", "--out",
                          str(tmp_path / "t"), "--quiet"])
    assert code == 0
    text = out.decode()
    assert "learned 44 merges" in text and "bytes per token on the corpus" in text
    assert (tmp_path / "t" / "tokenizer.json").is_file()


def test_train_never_replaces_a_folder_of_someone_elses_files(corpus, tmp_path, cli):
    out = tmp_path / "t"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "config.json").write_text('{"mine": true}')
    code, _, err = cli(["train", str(corpus), "--vocab-size", "260", "--out", str(out), "--quiet"])
    assert code == 2 and "files this tool did not write" in err and "--force" in err
    assert_one_line_error(err)
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "config.json").read_text() == '{"mine": true}'
    # --force says "replace it": the folder then holds exactly one tokenizer.
    assert cli(["train", str(corpus), "--vocab-size", "260", "--out", str(out), "--quiet",
                "--force"])[0] == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUT_FILES)
    assert [p.name for p in tmp_path.iterdir()] == ["t"]  # no staging folder left


def test_train_replaces_its_own_tokenizer_folder(corpus, tmp_path, cli):
    out = tmp_path / "t"
    assert cli(["train", str(corpus), "--vocab-size", "260", "--out", str(out), "--quiet"])[0] == 0
    assert cli(["train", str(corpus), "--vocab-size", "270", "--out", str(out), "--quiet"])[0] == 0
    assert json.loads((out / "config.json").read_text())["vocab_size"] == 270
    assert [p.name for p in tmp_path.iterdir()] == ["t"]


@pytest.mark.parametrize("out", ["", "   "])
def test_train_refuses_an_empty_out(out, corpus, cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(["train", str(corpus), "--vocab-size", "260", "--out", out, "--quiet"])
    assert code == 2 and "non-empty path" in err
    assert list(tmp_path.iterdir()) == []


def test_train_as_a_subprocess_then_encode_decode_show(corpus, tmp_path):
    out = tmp_path / "tok"
    result = python_m("train", str(corpus), "--vocab-size", "400", "--special-tokens",
                      ENDOFTEXT, "--out", str(out))
    assert result.returncode == 0, result.stderr.decode()
    assert b"merges" in result.stderr  # the progress bars
    sample = tmp_path / "sample.txt"
    sample.write_bytes(SAMPLE.encode())

    encoded = python_m("encode", "--tokenizer", str(out), str(sample))
    assert encoded.returncode == 0, encoded.stderr.decode()
    ids = [int(word) for word in encoded.stdout.split()]
    assert ids == load_tokenizer(str(out)).encode(SAMPLE)

    decoded = python_m("decode", "--tokenizer", str(out), stdin=encoded.stdout)
    assert decoded.returncode == 0
    assert decoded.stdout == SAMPLE.encode()  # \r\n and all, byte for byte

    shown = python_m("show", "--tokenizer", str(out), "--text", "hello there")
    assert ANSI_CODE.sub("", shown.stdout.decode()) == "hello there\n"


# Encode, decode, show ---------------------------------------------------------------------


def test_encode_file_and_stdin(trained_dir, tmp_path, cli):
    ours = load_tokenizer(str(trained_dir))
    path = tmp_path / "in.txt"
    path.write_bytes(SAMPLE.encode())
    expected = " ".join(map(str, ours.encode(SAMPLE))) + "\n"
    assert cli(["encode", "--tokenizer", str(trained_dir), str(path)])[1].decode() == expected
    assert cli(["encode", "--tokenizer", str(trained_dir)], SAMPLE.encode())[1].decode() == expected
    code, out, _ = cli(["encode", "--tokenizer", str(trained_dir), "--count", str(path)])
    assert (code, out) == (0, f"{len(ours.encode(SAMPLE))}\n".encode())


def test_encode_long_input_streams_in_batches(trained_dir, cli):
    text = english_prose(120_000)
    code, out, _ = cli(["encode", "--tokenizer", str(trained_dir)], text.encode())
    assert code == 0
    assert [int(w) for w in out.split()] == load_tokenizer(str(trained_dir)).encode(text)
    assert out.count(b"  ") == 0 and out.endswith(b"\n")


def test_a_warning_is_one_line_that_names_no_line_of_our_code(tmp_path, cli, monkeypatch):
    # One pretoken longer than encode_iterable's warning threshold must wait in memory, and
    # the stream says so. Python's own format named bpe_course/cli.py and printed a line of it.
    monkeypatch.setattr(streaming, "HELD_TEXT_WARNING", 100_000)
    path = tmp_path / "one-word.txt"
    path.write_text("a" * 300_000 + " end\n", encoding="utf-8")
    code, out, err = cli(["encode", "--count", "--tokenizer", "gpt2", str(path)])
    assert code == 0 and out.strip().isdigit()
    assert err.startswith("bpe-course: warning: encode_iterable is holding "), err
    assert err.count("\n") == 1 and ".py" not in err


def test_a_warning_about_a_corpus_names_it_even_when_it_is_python_source(tmp_path, cli):
    # Training on source code is a lesson of the course. The warning's one line left out any
    # file name ending in ".py", taking it for a line of our code, so a long stretch in
    # corpus.py was reported without saying in which corpus file it was.
    path = tmp_path / "corpus.py"
    path.write_text("1" * 600_000 + " end\n", encoding="utf-8")  # one run of digits
    out_dir = tmp_path / "out"
    code, _, err = cli(["train", str(path), "--vocab-size", "260", "--out", str(out_dir),
                        "--quiet"])
    assert code == 0, err
    assert err.startswith(f"bpe-course: warning: {path}: the 600,000 bytes from byte 0 "), err
    assert err.count("\n") == 1


def test_builtin_tokenizers_match_tiktoken(cli, tiktoken_gpt2):
    code, out, _ = cli(["encode", "--tokenizer", "gpt2"], SAMPLE.encode())
    assert code == 0
    assert [int(w) for w in out.split()] == tiktoken_gpt2.encode(SAMPLE, allowed_special="all")
    code, out, _ = cli(["decode", "--tokenizer", "gpt2", "15496", "11", "995", "0"])
    assert (code, out) == (0, b"Hello, world!")


@pytest.mark.parametrize("tokenizer", ["gpt2", "cl100k_base", "o200k_base"])
def test_encode_special_chooses_what_special_tokens_become(cli, openai_pairs, tokenizer):
    _, theirs = openai_pairs[tokenizer]
    text = f"a{ENDOFTEXT}b <|endofprompt|>"
    for special, expected in [
        ([], theirs.encode(text, allowed_special="all")),
        (["--special", "all"], theirs.encode(text, allowed_special="all")),
        (["--special", "none"], theirs.encode_ordinary(text)),
    ]:
        code, out, _ = cli(["encode", "--tokenizer", tokenizer, *special], text.encode())
        assert code == 0 and [int(w) for w in out.split()] == expected
    code, out, err = cli(["encode", "--tokenizer", tokenizer, "--special", "raise"], text.encode())
    assert code == 1 and f"the input holds {ENDOFTEXT!r}: use --special all" in err
    assert_one_line_error(err)
    code, out, _ = cli(["encode", "--tokenizer", tokenizer, "--special", "raise"], b"plain")
    assert code == 0 and [int(w) for w in out.split()] == theirs.encode("plain")


def test_show_and_encode_read_lone_surrogates_as_tiktoken_does(tiktoken_gpt2):
    # An argument that is not UTF-8 reaches Python as a lone surrogate (b"\xff" -> "\udcff");
    # `show --text` used to fail on it with "codec can't encode". It is read as U+FFFD, as
    # tiktoken reads "a\udcffb", and the byte count is of what was encoded.
    shown = subprocess.run(
        [sys.executable, "-m", "bpe_course", "show", "--tokenizer", "gpt2", "--text", b"a\xffb"],
        env=COLOUR_ENV,
        capture_output=True, timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert ANSI_CODE.sub("", shown.stdout.decode()) == "a\ufffdb\n"
    expected = tiktoken_gpt2.encode("a\udcffb")
    assert expected == [64, 4210, 65]
    assert shown.stderr.decode() == f"{len(expected)} tokens, 5 bytes\n"


def test_show(cli, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    code, out, err = cli(["show", "--tokenizer", "gpt2", "--text", "a <b> & c"])
    assert code == 0
    assert "\x1b[" in out.decode()
    assert ANSI_CODE.sub("", out.decode()) == "a <b> & c\n"
    assert "tokens" in err
    code, out, _ = cli(["show", "--tokenizer", "gpt2"], b"from stdin")
    assert ANSI_CODE.sub("", out.decode()) == "from stdin\n"


# Mistakes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["train", "missing.txt", "--vocab-size", "300", "--out", "o"], 2, "not found"),
        (["train", "{corpus}", "--vocab-size", "100", "--out", "o"], 2, "vocab-size"),
        (["train", "{corpus}", "--vocab-size", "ten", "--out", "o"], 2, "invalid int"),
        (["train", "{corpus}", "--vocab-size", "300", "--pattern", "gpt9", "--out", "o"], 2,
         "invalid choice"),
        (["train", "{corpus}", "--vocab-size", "300"], 2, "--out"),
        (["train", "{corpus}", "--vocab-size", "300", "--special-tokens", "<s>", "<s>",
          "--out", "o"], 2, "more than once"),
        (["train", "{corpus}", "--vocab-size", "300", "--processes", "0", "--out", "o"], 2,
         "--processes"),
        (["encode", "--tokenizer", "no-such-folder", "{corpus}"], 2, "no such folder"),
        (["encode", "--tokenizer", "{empty}", "{corpus}"], 1, "no vocab.json"),
        (["encode", "--tokenizer", "gpt2", "missing.txt"], 2, "not found"),
        (["encode", "--tokenizer", "gpt2", "{bad_utf8}"], 1, "not valid UTF-8 at byte offset 3"),
        (["decode", "--tokenizer", "gpt2", "1", "99999999"], 1, "unknown token id 99999999"),
        (["decode", "--tokenizer", "gpt2", "1", "x"], 1, "'x' is not a token id"),
        (["decode", "--tokenizer", "gpt2", "-5"], 1, "'-5' is not a token id"),
        (["show", "--tokenizer", "gpt2", "--text", "a", "{corpus}"], 2, "not both"),
        ([], 2, "required"),
    ],
)
def test_mistakes_get_one_line_and_an_exit_code(args, code, message, corpus, tmp_path, cli,
                                                monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "bad.txt").write_bytes(b"abc\xff\xfedef")
    names = {"corpus": str(corpus), "empty": "empty", "bad_utf8": "bad.txt"}
    got, out, err = cli([arg.format(**names) for arg in args])
    assert got == code
    assert message in err
    assert_one_line_error(err)
    assert not (tmp_path / "o").exists()


def test_broken_tokenizer_folder(tmp_path, cli):
    (tmp_path / "vocab.json").write_text("{not json")
    (tmp_path / "merges.txt").write_text("#version: 0.2\n")
    (tmp_path / "config.json").write_text('{"pattern": "gpt2"}')
    code, _, err = cli(["decode", "--tokenizer", str(tmp_path), "1"])
    assert code == 1 and "not a valid JSON vocabulary" in err
    assert err.count("\n") == 1


def test_hand_edited_config_is_checked(trained_dir, tmp_path, cli):
    import shutil

    folder = tmp_path / "tok"
    shutil.copytree(trained_dir, folder)
    (folder / "config.json").write_text('{"pattern": "gpt4", "special_tokens": "<|x|>"}')
    code, _, err = cli(["decode", "--tokenizer", str(folder), "1"])
    assert code == 1 and "must be a list of strings" in err
    (folder / "config.json").write_text('{"pattern": "gpt7"}')
    code, _, err = cli(["decode", "--tokenizer", str(folder), "1"])
    assert code == 1 and "unknown pattern 'gpt7'" in err


def test_invalid_utf8_corpus(tmp_path, cli):
    corpus = tmp_path / "bad.txt"
    corpus.write_bytes(b"fine text\n" * 10 + b"\xc3(")
    code, _, err = cli(["train", str(corpus), "--vocab-size", "300", "--out",
                        str(tmp_path / "o"), "--quiet"])
    assert code == 1 and "not valid UTF-8 at byte offset 100" in err
    assert not (tmp_path / "o").exists()


def test_mistake_as_a_subprocess(tmp_path):
    result = python_m("train", "missing.txt", "--vocab-size", "300", "--out", "o", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.decode() == "bpe-course: error: corpus file not found: missing.txt\n"


# Interrupted or failed training leaves nothing half-written ----------------------------------


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_ctrl_c_during_training_writes_nothing(corpus, tmp_path, cli, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(train_module, "train_bpe", interrupted)
    code, _, err = cli(["train", str(corpus), "--vocab-size", "300", "--out",
                        str(tmp_path / "o"), "--quiet"])
    assert code == 130 and "interrupted; nothing was written" in err
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("error", [KeyboardInterrupt, OSError("No space left on device")])
@pytest.mark.parametrize("existing", [False, True])
def test_failure_while_writing_leaves_the_folder_as_it_was(error, existing, corpus, tmp_path,
                                                           cli, monkeypatch):
    from bpe_course.formats import export

    out = tmp_path / "o"
    if existing:
        out.mkdir()
        (out / "vocab.json").write_text("old")

    def failing(*args, **kwargs):
        raise error

    # The tiktoken file is written after vocab.json, merges.txt and tokenizer.json.
    monkeypatch.setattr(export, "save_tiktoken", failing)
    code, _, err = cli(["train", str(corpus), "--vocab-size", "300", "--out", str(out),
                        "--quiet", "--force"])
    assert code == (130 if error is KeyboardInterrupt else 1)
    assert_one_line_error(err)
    assert leftovers(tmp_path) == (["o"] if existing else [])
    if existing:
        assert leftovers(out) == ["vocab.json"]
        assert (out / "vocab.json").read_text() == "old"


@pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX process groups")
def test_real_ctrl_c_stops_workers_quietly(tmp_path):
    """Send SIGINT to the whole process group, as a terminal's Ctrl-C does."""
    import os
    import signal

    corpus = tmp_path / "big.txt"
    corpus.write_text((english_prose() + ENDOFTEXT) * 14, encoding="utf-8")  # ~6.5 MB
    process = subprocess.Popen(
        [sys.executable, "-m", "bpe_course", "train", str(corpus), "--vocab-size", "5000",
         "--special-tokens", ENDOFTEXT, "--processes", "2", "--out", str(tmp_path / "o")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
    seen = b""
    while seen.count(b"B/s]") < 2:  # the bar has moved once: the workers are counting
        seen += process.stderr.read(1) or b"B/s]B/s]"
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    if process.returncode == 0:
        pytest.skip("training finished before the signal arrived")
    assert process.returncode == 130
    assert "interrupted; nothing was written" in err.decode()
    assert "Traceback" not in err.decode()
    assert leftovers(tmp_path) == ["big.txt"]


# Fuzzing: whatever the arguments, a line on stderr and an exit code, never a traceback ----

_words = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["0", "15496", "-1", "99999999", "1_000", "١٢", " 7", "7 ", "", "--", "-", "--count",
     "--text", "--tokenizer", "gpt2", "cl100k_base", "o200k_base", "nope", "/", "/dev/null",
     "--special", "raise", "none", ENDOFTEXT,
     "\udc80", "a\ud83db", "\ud83d\ude00"]  # lone surrogates: argv bytes that are not UTF-8
)


@given(
    command=st.sampled_from(["encode", "decode", "show"]),
    tokenizer=st.sampled_from(["gpt2", "cl100k_base", "nowhere", "", "/"]),
    words=st.lists(_words, max_size=5),
    stdin=st.binary(max_size=40) | st.text(max_size=40).map(str.encode),
)
def test_no_argument_ever_gets_a_traceback(cli, command, tokenizer, words, stdin):
    code, out, err = cli([command, "--tokenizer", tokenizer, *words], stdin=stdin)
    assert isinstance(code, int)
    assert "Traceback" not in err
    if code:
        assert_one_line_error(err)


@pytest.mark.parametrize("where", ["corpus_folder", "cwd", "parent_of_cwd"])
def test_force_never_replaces_a_folder_holding_the_corpus_or_the_cwd(
    where, tmp_path, cli, monkeypatch
):
    folder = tmp_path / "work"
    (folder / "sub").mkdir(parents=True)
    corpus = folder / "corpus.txt"
    corpus.write_text(english_prose(5_000), encoding="utf-8")
    monkeypatch.chdir(folder / "sub" if where == "parent_of_cwd" else folder)
    out = "." if where == "cwd" else str(folder)
    code, _, err = cli(["train", str(corpus), "--vocab-size", "260", "--out", out, "--quiet",
                        "--force"])
    assert code == 2 and "would delete" in err
    assert corpus.read_text(encoding="utf-8") == english_prose(5_000)


def test_out_through_a_symbolic_link_saves_into_the_linked_folder(corpus, tmp_path, cli):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    assert cli(["train", str(corpus), "--vocab-size", "260", "--out", str(tmp_path / "link"),
                "--quiet"])[0] == 0
    assert (tmp_path / "link").is_symlink()
    assert sorted(p.name for p in real.iterdir()) == sorted(OUTPUT_FILES)
    assert cli(["train", str(corpus), "--vocab-size", "270", "--out", str(tmp_path / "link"),
                "--quiet"])[0] == 0
    assert json.loads((real / "config.json").read_text())["vocab_size"] == 270
