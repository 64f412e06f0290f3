"""Where the chunker cuts a corpus file, and that its counts never depend on the cuts."""

from __future__ import annotations

from pathlib import Path

import pytest

from bpe_course.base import ENDOFTEXT
from bpe_course.chunks import count_file_pretokens, find_chunk_boundaries
from bpe_course.pretokenize import GPT2_PATTERN, GPT4_PATTERN, count_pretokens


def write(tmp_path: Path, text: str, name: str = "corpus.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def test_cuts_fall_at_the_start_of_special_tokens(tmp_path):
    text = "".join(f"document {i} is here.{ENDOFTEXT}" for i in range(50))
    path = write(tmp_path, text)
    data = path.read_bytes()
    bounds = find_chunk_boundaries(path, 100, [ENDOFTEXT])
    assert bounds[0] == 0 and bounds[-1] == len(data)
    assert bounds == sorted(set(bounds))
    assert len(bounds) > 5
    assert all(data[cut:].startswith(ENDOFTEXT.encode()) for cut in bounds[1:-1])


@pytest.mark.parametrize("pattern", [GPT2_PATTERN, GPT4_PATTERN])
def test_without_special_tokens_cuts_fall_after_safe_newlines(tmp_path, pattern):
    text = "first line.\n  indented line\n\nblank above\nx\n" * 40
    path = write(tmp_path, text)
    data = path.read_bytes()
    bounds = find_chunk_boundaries(path, 64, [], pattern)
    assert len(bounds) > 10
    for cut in bounds[1:-1]:
        # a visible character, a newline, the cut, a visible character
        assert data[cut - 1 : cut] == b"\n"
        assert 0x21 <= data[cut - 2] <= 0x7E and 0x21 <= data[cut] <= 0x7E


def test_an_unknown_pattern_without_special_tokens_is_one_chunk(tmp_path):
    path = write(tmp_path, "a\nb\n" * 1000)
    assert find_chunk_boundaries(path, 10, [], r"\S+|\s+") == [0, 4000]


def test_no_cut_point_means_one_long_chunk(tmp_path):
    path = write(tmp_path, "x" * 1000)
    assert find_chunk_boundaries(path, 10, [ENDOFTEXT]) == [0, 1000]
    assert find_chunk_boundaries(path, 10, []) == [0, 1000]


def test_empty_file(tmp_path):
    path = write(tmp_path, "")
    assert find_chunk_boundaries(path, 10, [ENDOFTEXT]) == [0, 0]
    assert count_file_pretokens([str(path)], [ENDOFTEXT], chunk_bytes=10) == {}


def test_special_token_straddling_a_read_block_is_found(tmp_path):
    # The cut search reads 64 KiB from byte 10 on, so that read ends at byte 65546; a token
    # that starts 5 bytes before the end of one read and ends in the next must be seen.
    text = "a" * (65546 - 5) + ENDOFTEXT + "b" * 100
    path = write(tmp_path, text)
    assert find_chunk_boundaries(path, 10, [ENDOFTEXT]) == [0, 65546 - 5, len(text)]


def test_safe_newline_straddling_a_read_block_is_found(tmp_path):
    # The newline is the last byte of the first read, the visible character after it the
    # first byte of the next one.
    text = "a" * (65546 - 1) + "\nb" + "c" * 100
    path = write(tmp_path, text)
    assert find_chunk_boundaries(path, 10, []) == [0, 65546, len(text)]


@pytest.mark.parametrize("chunk_bytes", [1, 3, 10, 1000])
def test_parallel_counts_equal_counts_of_the_whole_text(
    tmp_path, monkeypatch, pool_spy, chunk_bytes
):
    from bpe_course import chunks

    monkeypatch.setattr(chunks, "PARALLEL_THRESHOLD", 0)
    text = f"Hello,  world!\n\n  {ENDOFTEXT}{ENDOFTEXT}  中文 😀 123456\r\nend.\nnext " * 60
    path = write(tmp_path, text)
    for special_tokens in ([ENDOFTEXT], []):
        counts = count_file_pretokens(
            [str(path)], special_tokens, num_processes=2, chunk_bytes=chunk_bytes
        )
        assert counts == count_pretokens(text, special_tokens)
    assert pool_spy == [2, 2]


def test_several_files_are_counted_together(tmp_path):
    first = write(tmp_path, "one two", "a.txt")
    second = write(tmp_path, " two three", "b.txt")
    counts = count_file_pretokens([str(first), str(second)], num_processes=1)
    assert counts == {"one": 1, " two": 2, " three": 1}


def test_a_special_token_inside_a_longer_one_is_not_a_cut(tmp_path):
    special_tokens = [ENDOFTEXT, f"[{ENDOFTEXT}]"]
    text = f"a[{ENDOFTEXT}]b" * 3
    path = write(tmp_path, text)
    for chunk_bytes in (1, 2, 18, 19):
        counts = count_file_pretokens(
            [str(path)], special_tokens, chunk_bytes=chunk_bytes, num_processes=1
        )
        assert counts == count_pretokens(text, special_tokens)
