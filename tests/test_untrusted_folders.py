"""Tokenizer folders and names from anywhere: every message names the real cause.

A folder that cannot be read was reported as holding no files; a vocab_size written as text
was compared as text; a folder named like a built-in tokenizer hid it with the same wrong
message. And nothing that runs out, memory or stack, reaches a user of the command line as a
traceback.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bpe_course import Tokenizer
from bpe_course.app import cli
from bpe_course.formats.folder import load_tokenizer_folder, save_tokenizer
from bpe_course.openai import gpt2
from bpe_course.utf8 import byte_vocab


@pytest.fixture
def saved(tmp_path) -> Path:
    folder = tmp_path / "tok"
    save_tokenizer(Tokenizer(byte_vocab(), []), str(folder))
    return folder


def test_a_folder_that_cannot_be_read_says_permission_denied(saved, monkeypatch):
    # It said "has no vocab.json or merges.txt or config.json". (Root reads a mode-000
    # folder anyway, so the refusal is simulated where the package asks for the listing.)
    real_listdir = os.listdir

    def listdir(path="."):
        if os.fspath(path) == str(saved):
            raise PermissionError(13, "Permission denied", str(path))
        return real_listdir(path)

    monkeypatch.setattr(os, "listdir", listdir)
    with pytest.raises(ValueError,
                       match=f"cannot read the folder {saved}: Permission denied"):
        load_tokenizer_folder(str(saved))


@pytest.mark.parametrize(
    ("key", "value", "complaint"),
    [
        ("vocab_size", "256", "vocab_size must be a whole number, not str '256'"),
        ("vocab_size", 256.0, "vocab_size must be a whole number, not float 256.0"),
        ("merges", "0", "merges must be a whole number, not str '0'"),
        ("merges", True, "merges must be a whole number, not bool True"),
    ],
)
def test_a_count_written_as_text_is_named_as_such(saved, key, value, complaint):
    # "vocab_size": "400" gave "says vocab_size '400' but ... holds 400 tokens".
    config_path = saved / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config[key] = value
    config_path.write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ValueError, match=f"{config_path}: {complaint}"):
        load_tokenizer_folder(str(saved))


# A name that is a built-in tokenizer and a folder here ------------------------------------


def test_an_empty_folder_named_gpt2_does_not_hide_the_built_in(tmp_path, monkeypatch):
    # It said "gpt2 has no vocab.json or merges.txt or config.json".
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gpt2").mkdir()
    with pytest.warns(UserWarning, match="using the built-in, as the one here is not a "
                                         "tokenizer folder"):
        assert cli.load_tokenizer("gpt2") is gpt2()
    with pytest.raises(ValueError, match="has no vocab.json"):  # ./gpt2 is the folder
        cli.load_tokenizer("./gpt2")


def test_a_tokenizer_folder_named_gpt2_is_used_and_the_choice_is_said(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    save_tokenizer(Tokenizer(byte_vocab(), []), "gpt2")
    with pytest.warns(UserWarning, match=r"using the folder, not the built-in \(give ./gpt2"):
        assert cli.load_tokenizer("gpt2").vocab_size == 256


def test_the_command_line_prints_the_choice_as_one_warning_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gpt2").mkdir()
    assert cli.main(["encode", "--tokenizer", "gpt2", "--count", os.devnull]) == 0
    out, err = capsys.readouterr()
    assert out == "0\n"
    assert err.startswith("bpe-course: warning: --tokenizer gpt2: a built-in tokenizer and ")
    assert err.count("\n") == 1


# Nothing that runs out reaches the user as a traceback --------------------------------------


@pytest.mark.parametrize(
    ("error", "said"),
    [(MemoryError(), "ran out of memory reading"), (RecursionError(), "ran out of stack")],
)
def test_running_out_is_one_line_naming_the_input(tmp_path, monkeypatch, capsys, error, said):
    text = tmp_path / "notes.txt"
    text.write_text("hello", encoding="utf-8")

    def run_out(*args, **kwargs):
        raise error

    monkeypatch.setattr(cli, "ansi_tokens", run_out)  # while the text is being worked on
    code = cli.main(["show", "--tokenizer", "gpt2", "--text", text.read_text()])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1, err
    assert said in err and "the tokenizer gpt2" in err  # --text: no file to name
