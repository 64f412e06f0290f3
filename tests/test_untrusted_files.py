"""Tokenizer files from anywhere: refused fast, with bounded messages, before anything is read.

A path can name a FIFO, a device or a folder; a file can be absurdly large, hold a token of
100 MB, a rank of 5,000 digits, two tokens with one rank, or a rank tiktoken keeps for
itself. Every reader refuses each of these with a short message that names the file.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import random
import re
import threading
from pathlib import Path

import pytest

from bpe_course import Tokenizer
from bpe_course.formats import gpt2
from bpe_course.formats.folder import load_tokenizer_folder, save_tokenizer
from bpe_course.formats.gpt2 import read_merges_txt, read_vocab_json
from bpe_course.openai import check_sha256, load_gpt2_files, load_tiktoken_file, read_tiktoken_ranks
from bpe_course.pretokens import GPT2_PATTERN
from bpe_course.utf8 import byte_vocab


def limit_reads_to(monkeypatch, size: int) -> None:
    from bpe_course.safety import reading  # (imported here so the rest ran before it existed)

    monkeypatch.setattr(reading, "MAX_FILE_BYTES", size)


def byte_lines() -> list[str]:
    return [f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(256)]


def rank_file(path: Path, extra: list[str]) -> Path:
    path.write_text("\n".join(byte_lines() + extra) + "\n", encoding="ascii")
    return path


def gpt2_files(folder: Path) -> tuple[Path, Path]:
    vocab, merges = folder / "vocab.json", folder / "merges.txt"
    Tokenizer(byte_vocab(), []).save(vocab, merges)
    return vocab, merges


# Not a regular file ---------------------------------------------------------------------


def readers(tmp_path: Path):
    """Every way the package reads a tokenizer file, each given ``bad`` as the file."""
    vocab, merges = gpt2_files(tmp_path)
    return {
        "read_tiktoken_ranks": read_tiktoken_ranks,
        "load_tiktoken_file": lambda bad: load_tiktoken_file(bad, GPT2_PATTERN),
        "load_gpt2_files (encoder.json)": lambda bad: load_gpt2_files(bad, merges),
        "load_gpt2_files (vocab.bpe)": lambda bad: load_gpt2_files(vocab, bad),
        "read_vocab_json": read_vocab_json,
        "read_merges_txt": read_merges_txt,
        "Tokenizer.from_files": lambda bad: Tokenizer.from_files(vocab, bad),
        "check_sha256": lambda bad: check_sha256(bad, "0" * 64),
    }


READERS = [
    "read_tiktoken_ranks", "load_tiktoken_file", "load_gpt2_files (encoder.json)",
    "load_gpt2_files (vocab.bpe)", "read_vocab_json", "read_merges_txt", "Tokenizer.from_files",
    "check_sha256",
]


class Fifo:
    """A FIFO with a writer waiting in a thread: a reader that opens it gets an empty file at
    once (so the old code failed on the contents instead of hanging); one that never opens
    it leaves the writer waiting, and :meth:`release` lets it go."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path = path
        self.writer = threading.Thread(target=lambda: open(path, "wb").close(), daemon=True)
        self.writer.start()

    def release(self) -> None:
        descriptor = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        self.writer.join(timeout=10)
        os.close(descriptor)


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("kind", ["a character device", "a FIFO (named pipe)", "a folder"])
def test_every_reader_refuses_what_is_not_a_regular_file(tmp_path, reader, kind):
    # /dev/zero was read until memory ran out (3.8 GB, then a MemoryError with no message),
    # a FIFO hung the reader for ever, a folder gave "[Errno 21] Is a directory: 'x'".
    fifo = None
    if kind == "a character device":
        bad = Path("/dev/zero")
    elif kind == "a folder":
        bad = tmp_path / "folder"
        bad.mkdir()
    else:
        fifo = Fifo(tmp_path / "pipe")
        bad = fifo.path
    try:
        with pytest.raises(ValueError) as caught:
            readers(tmp_path)[reader](bad)
    finally:
        if fifo is not None:
            fifo.release()
    assert str(caught.value).startswith(f"{bad} is {kind}, not a regular file"), caught.value


def test_a_link_to_a_device_is_refused_as_the_device(tmp_path):
    link = tmp_path / "vocab.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(ValueError, match=re.escape(f"{link} is a character device")):
        read_vocab_json(link)


@pytest.mark.parametrize("reader", READERS)
def test_every_reader_refuses_a_file_over_the_limit_before_reading_it(
    tmp_path, monkeypatch, reader
):
    big = tmp_path / "big"
    big.write_bytes(b"x" * 5000)  # the good files beside it are smaller than the limit
    limit_reads_to(monkeypatch, 4000)
    with pytest.raises(ValueError, match=re.escape(f"{big} is 5,000 bytes, larger than any")):
        readers(tmp_path)[reader](big)


def test_a_small_gz_that_unpacks_to_too_much_is_refused(tmp_path, monkeypatch):
    bomb = tmp_path / "r.tiktoken.gz"
    bomb.write_bytes(gzip.compress(b"\n" * 10**6))  # 1 MB of blank lines in about 1 kB
    limit_reads_to(monkeypatch, 100_000)
    with pytest.raises(ValueError, match=re.escape(f"{bomb} unpacks to more than 100,000 bytes")):
        read_tiktoken_ranks(bomb)


def test_a_folder_whose_config_json_is_a_fifo_is_refused(tmp_path):
    folder = tmp_path / "tok"
    save_tokenizer(Tokenizer(byte_vocab(), []), str(folder))
    (folder / "config.json").unlink()
    fifo = Fifo(folder / "config.json")
    try:
        with pytest.raises(ValueError, match="config.json is a FIFO"):
            load_tokenizer_folder(str(folder))
    finally:
        fifo.release()


# Bounded messages ------------------------------------------------------------------------


def long_token(size: int) -> bytes:
    return random.Random(size).randbytes(size)


def unbuildable_rank_file(path: Path) -> Path:
    return rank_file(path, [f"{base64.b64encode(long_token(100_000)).decode()} 256"])


def long_merge_line(path: Path) -> Path:
    path.write_text("#version: 0.2\n" + "a" * 300_000 + "\n", encoding="utf-8")
    return path


def long_vocab_token(path: Path) -> Path:
    path.write_text(json.dumps({"\u4e00" * 300_000: 0}), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("make", "read", "names"),
    [
        (unbuildable_rank_file, lambda p: load_tiktoken_file(p, GPT2_PATTERN), "(rank 256)"),
        (long_merge_line, read_merges_txt, ":2: expected two tokens"),
        (long_vocab_token, read_vocab_json, "which is not in GPT-2's byte-to-unicode"),
    ],
)
def test_a_huge_token_is_quoted_by_its_start(tmp_path, make, read, names):
    # The token used to go into the message whole: 100 MB made a 314 MB message.
    path = make(tmp_path / "file")
    with pytest.raises(ValueError) as caught:
        read(path)
    message = str(caught.value)
    assert str(path) in message and names in message
    assert len(message) < 600, message[:600]
    assert re.search(r"\.\.\. \([\d,]+ (bytes|characters)\)", message), message


# Ranks -----------------------------------------------------------------------------------


def test_a_rank_of_5000_digits_names_file_line_and_token(tmp_path):
    path = rank_file(tmp_path / "r.tiktoken", ["YWI= " + "9" * 5000])
    with pytest.raises(ValueError, match=re.escape(f"{path}:257: token b'ab' has rank '9999")) as e:
        read_tiktoken_ranks(path)
    assert "too large" in str(e.value) and "(5,000 characters)" in str(e.value)


def test_leading_zeros_do_not_make_a_rank_too_large(tmp_path):
    path = rank_file(tmp_path / "r.tiktoken", ["YWI= " + "0" * 5000 + "256"])
    assert read_tiktoken_ranks(path)[b"ab"] == 256


def test_two_tokens_with_one_rank_are_both_named_with_their_lines(tmp_path):
    # Was "two tokens share a rank", with neither the line, the rank nor the tokens.
    path = rank_file(tmp_path / "r.tiktoken", ["YWI= 256", "Y2Q= 300", "ZWY= 256"])
    expected = f"{path}:259: rank 256 is given to b'ef' here and to b'ab' on line 257"
    with pytest.raises(ValueError, match=re.escape(expected)):
        load_tiktoken_file(path, GPT2_PATTERN)


def test_a_token_given_twice_names_both_lines(tmp_path):
    path = rank_file(tmp_path / "r.tiktoken", ["YWI= 256", "YWI= 257"])
    with pytest.raises(ValueError, match=re.escape(f"{path}:258: token b'ab' appears twice "
                                                   "(first on line 257)")):
        read_tiktoken_ranks(path)


@pytest.mark.parametrize("text", ["YR==", "YQ==YQ==", "Y Q=="])
def test_only_canonical_base64_is_a_token(tmp_path, text):
    # "YR==" decoded to b"a" too, so two spellings could name one token.
    path = rank_file(tmp_path / "r.tiktoken", [f"{text} 256"])
    with pytest.raises(ValueError, match=re.escape(f"{path}:257: expected 'base64-token rank'")):
        read_tiktoken_ranks(path)


# The rank tiktoken keeps for itself ----------------------------------------------------------

RESERVED = 2**32 - 1


def test_the_rank_tiktoken_reserves_is_refused_at_load(tmp_path):
    # tiktoken reads 2**32 - 1 as "no merge": it encoded "abab" as four bytes where the
    # tokenizer loaded from the same file gave two tokens "ab".
    path = rank_file(tmp_path / "r.tiktoken", [f"YWI= {RESERVED}"])
    with pytest.raises(ValueError, match=re.escape(f"{path}:257: token b'ab' has rank "
                                                   f"{RESERVED} (2**32 - 1), which tiktoken "
                                                   "reserves to mean 'no merge'")):
        load_tiktoken_file(path, GPT2_PATTERN)


def test_the_rank_tiktoken_reserves_is_refused_at_export():
    vocab = byte_vocab() | {RESERVED: b"ab"}
    tokenizer = Tokenizer(vocab, [(b"a", b"b")])
    assert tokenizer.encode("abab") == [RESERVED, RESERVED]
    for export in (lambda: tokenizer.to_tiktoken("x"), lambda: tokenizer.save_tiktoken("x")):
        with pytest.raises(ValueError, match="reserves to mean 'no merge'"):
            export()


def test_a_single_byte_or_special_token_may_have_the_largest_id(tmp_path):
    # tiktoken finds a single byte by lookup and a special token by its text, so both may
    # have 2**32 - 1; the export must then encode as we do.
    vocab = {token_id: token for token_id, token in byte_vocab().items() if token != b"a"}
    tokenizer = Tokenizer(vocab | {RESERVED: b"a", RESERVED - 1: b"<s>"}, [], ["<s>"])
    assert tokenizer.special_tokens == {"<s>": RESERVED - 1}
    encoding = tokenizer.to_tiktoken("x")
    for text in ["abab", "a<s>a", "banana"]:
        assert encoding.encode(text, allowed_special="all") == tokenizer.encode(text)
    path = tmp_path / "r.tiktoken"
    tokenizer.save_tiktoken(path)
    assert read_tiktoken_ranks(path)[b"a"] == RESERVED


def test_check_id_names_a_number_too_long_to_print(tmp_path):
    path = tmp_path / "vocab.json"
    with pytest.raises(ValueError, match=r"has id \(a number of 16,610 bits\), too large"):
        gpt2.check_id(10**5000, f"{path}: token 'a'")


def test_a_long_token_no_two_tokens_make_is_refused_without_joining_its_bytes(
    tmp_path, monkeypatch
):
    # Joining the bytes of a 100 MB token to find that it cannot be built took 20 s and 2.6 GB.
    from bpe_course.formats import ranks

    def join_below(*args):
        raise AssertionError("the bytes were joined")

    monkeypatch.setattr(ranks, "_join_below", join_below)
    path = unbuildable_rank_file(tmp_path / "r.tiktoken")
    with pytest.raises(ValueError, match=r"\(rank 256\) cannot be built by merging two"):
        load_tiktoken_file(path, GPT2_PATTERN)
