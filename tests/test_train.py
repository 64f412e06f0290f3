"""The fast trainer: CS336's reference merges, and always the naive trainer's answer."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest
import regex
from hypothesis import event, given
from hypothesis import strategies as st
from strategies import ENDOFTEXT, corpora, repetitive_word, word_count, word_counts

from bpe_course import (
    GPT2_PATTERN,
    GPT4_PATTERN,
    O200K_PATTERN,
    train_bpe,
    train_bpe_naive,
    train_from_counts,
    train_from_counts_naive,
)
from bpe_course.formats.gpt2 import unicode_to_bytes
from bpe_course.pretokens import count_pretokens
from bpe_course.speed.counting import count_file_pretokens, find_chunk_boundaries

# CS336's reference -----------------------------------------------------------------------


def read_reference_merges(path: Path) -> list[tuple[bytes, bytes]]:
    """CS336's merges file: two tokens a line in GPT-2's byte-to-unicode spelling."""
    table = unicode_to_bytes()
    merges = []
    for line in path.read_text(encoding="utf-8").splitlines():
        left, right = line.split(" ")
        merges.append((bytes(table[c] for c in left), bytes(table[c] for c in right)))
    return merges


def read_reference_vocab(path: Path) -> set[bytes]:
    """CS336's vocab json as a set of tokens (its ids are numbered differently from ours)."""
    table = unicode_to_bytes()
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {bytes(table[c] for c in token) for token in raw}


@pytest.fixture(scope="module")
def reference(cs336_dir: Path):
    """(corpus path, the 243 reference merges, the 500 reference tokens)."""
    merges = read_reference_merges(cs336_dir / "train-bpe-reference-merges.txt")
    vocab = read_reference_vocab(cs336_dir / "train-bpe-reference-vocab.json")
    assert len(merges) == 243 and len(vocab) == 500
    return cs336_dir / "corpus.en", merges, vocab


def test_cs336_reference_merges_and_vocab(reference):
    corpus, reference_merges, reference_vocab = reference
    vocab, merges = train_bpe(corpus, 500, [ENDOFTEXT])
    assert merges == reference_merges
    assert set(vocab.values()) == reference_vocab
    assert sorted(vocab) == list(range(500))
    assert vocab[256] == ENDOFTEXT.encode()


def test_cs336_reference_with_two_processes(reference):
    corpus, reference_merges, reference_vocab = reference
    vocab, merges = train_bpe(corpus, 500, [ENDOFTEXT], num_processes=2)
    assert merges == reference_merges
    assert set(vocab.values()) == reference_vocab


def test_cs336_reference_counted_in_parallel_chunks_without_special_tokens(
    reference, small_chunks, pool_spy
):
    # Without a special token the cuts fall where GPT-2's pattern never joins two characters.
    # The special token only takes an id, so 499 without it learns the same 243 merges.
    corpus, reference_merges, _ = reference
    assert len(find_chunk_boundaries(corpus, 4096, [], GPT2_PATTERN)) > 20
    small_chunks(4096)
    _, merges = train_bpe(corpus, 499, [], num_processes=2)
    assert pool_spy == [2]
    assert merges == reference_merges


def test_cs336_reference_counted_in_parallel_chunks_cut_on_special_tokens(
    reference, small_chunks, pool_spy, tmp_path
):
    # Put <|endoftext|> after every newline that follows a visible character: that leaves
    # the pretoken counts as they were, and gives the chunker special tokens to cut on.
    corpus, reference_merges, reference_vocab = reference
    text = corpus.read_text(encoding="utf-8")
    marked = regex.sub(r"(?<=\S\n)", ENDOFTEXT, text)
    assert marked.count(ENDOFTEXT) > 100
    path = tmp_path / "corpus-with-specials.txt"
    path.write_bytes(marked.encode("utf-8"))

    assert len(find_chunk_boundaries(path, 4096, [ENDOFTEXT])) > 20
    assert count_file_pretokens(
        [str(path)], [ENDOFTEXT], num_processes=2, chunk_bytes=4096
    ) == count_pretokens(text)
    assert pool_spy == [2]

    small_chunks(4096)
    vocab, merges = train_bpe(path, 500, [ENDOFTEXT], num_processes=2)
    assert pool_spy == [2, 2]
    assert merges == reference_merges
    assert set(vocab.values()) == reference_vocab


def test_naive_trainer_on_corpus_en_matches_the_fast_one(reference):
    corpus, reference_merges, _ = reference
    fast = train_bpe(corpus, 500, [ENDOFTEXT])
    naive = train_bpe_naive(corpus, 500, [ENDOFTEXT])
    assert naive == fast
    assert naive[1] == reference_merges


# Fast == naive, on generated input ----------------------------------------------------------


@given(
    counts=word_counts(st.sampled_from("ab"))
    | word_counts(st.sampled_from("abc"))
    | word_counts(st.sampled_from("aé中"))
    | word_counts(st.characters(codec="utf-8")),
    extra_merges=st.integers(0, 40),
    special_tokens=st.sampled_from([(), (ENDOFTEXT,), (ENDOFTEXT, "<pad>")]),
)
def test_train_from_counts_matches_naive(counts, extra_merges, special_tokens):
    vocab_size = 256 + len(special_tokens) + extra_merges
    fast = train_from_counts(counts, vocab_size, special_tokens)
    naive = train_from_counts_naive(counts, vocab_size, special_tokens)
    assert fast == naive
    event("stopped early" if len(fast[0]) < vocab_size else "filled the vocabulary")


@given(
    counts=st.dictionaries(st.binary(min_size=1, max_size=6), st.integers(1, 20), max_size=10),
    extra_merges=st.integers(0, 30),
)
def test_train_from_counts_matches_naive_on_raw_bytes(counts, extra_merges):
    # Pretokens given as bytes need not be valid UTF-8.
    assert train_from_counts(counts, 256 + extra_merges) == train_from_counts_naive(
        counts, 256 + extra_merges
    )


def test_train_from_counts_uses_every_pair_until_none_is_left():
    # Two distinct letters in one word of length 6: at most 5 merges can ever happen.
    vocab, merges = train_from_counts({"ababab": 1}, 10_000)
    assert len(merges) <= 5
    assert vocab[len(vocab) - 1] == b"ababab"


# What the merge loop's shortcuts must survive: runs of one pair, long words, ties, counts
# of 1 and counts far beyond 64 bits. The naive trainer recounts everything, so it is the judge.


@given(
    counts=st.dictionaries(repetitive_word, word_count, min_size=1, max_size=8)
    | st.dictionaries(repetitive_word, st.just(1), min_size=1, max_size=8)
    | st.dictionaries(st.text(st.sampled_from("ab"), min_size=1, max_size=200), word_count),
    extra_merges=st.integers(0, 60),
)
def test_train_from_counts_matches_naive_on_runs_long_words_and_extreme_counts(
    counts, extra_merges
):
    vocab_size = 257 + extra_merges
    fast = train_from_counts(counts, vocab_size, [ENDOFTEXT])
    assert fast == train_from_counts_naive(counts, vocab_size, [ENDOFTEXT])
    event("stopped early" if len(fast[0]) < vocab_size else "filled the vocabulary")


def test_a_single_run_merges_into_powers_of_two():
    # 2**12 copies of "a": each merge doubles the token, and the whole run ends as one token.
    vocab, merges = train_from_counts({"a" * 4096: 3}, 300)
    assert [len(a + b) for a, b in merges] == [2**k for k in range(1, 13)]
    assert vocab[len(vocab) - 1] == b"a" * 4096


@pytest.mark.parametrize("enabled", [True, False])
def test_training_leaves_the_cycle_collector_as_it_found_it(enabled):
    # The collector is paused while training; it must come back on, even after an error,
    # and must stay off for a caller who had switched it off.
    was_enabled = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        train_from_counts({"low": 5, "lower": 2}, 260)
        assert gc.isenabled() is enabled
        with pytest.raises(TypeError, match="must be an int"):
            train_from_counts({"low": 1.5}, 260)
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was_enabled else gc.disable()



# Chunks of a few bytes often find no safe cut in a stretch twice as long: expected here.
@pytest.mark.filterwarnings("ignore::bpe_course.speed.counting.LongChunkWarning")
@given(
    corpus=corpora(),
    pattern=st.sampled_from([GPT2_PATTERN, GPT4_PATTERN, O200K_PATTERN]),
    extra_merges=st.integers(0, 50),
    num_processes=st.sampled_from([1, 1, 2]),
    chunk_bytes=st.integers(1, 24),
)
def test_train_bpe_matches_naive_across_chunk_boundaries(
    tmp_path, small_chunks, corpus, pattern, extra_merges, num_processes, chunk_bytes
):
    # The naive trainer reads the file in one piece; the fast one counts it in chunks of a
    # few bytes. Equal results mean no chunk cut ever changed a pretoken.
    special_tokens, text = corpus
    path = tmp_path / "corpus.txt"
    path.write_bytes(text.encode("utf-8"))
    small_chunks(chunk_bytes)
    vocab_size = 256 + len(special_tokens) + extra_merges

    fast = train_bpe(path, vocab_size, special_tokens, pattern=pattern, num_processes=num_processes)
    naive = train_bpe_naive(path, vocab_size, special_tokens, pattern=pattern)
    assert fast == naive
    chunks = len(find_chunk_boundaries(path, chunk_bytes, special_tokens, pattern)) - 1
    event(f"chunks: {'1' if chunks == 1 else '2-5' if chunks <= 5 else 'more than 5'}")


def test_train_bpe_on_several_files_adds_their_counts(tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("low low lower", encoding="utf-8")
    second.write_text(" newest newest widest", encoding="utf-8")
    both = tmp_path / "both.txt"
    both.write_text(f"low low lower{ENDOFTEXT} newest newest widest", encoding="utf-8")
    trained = train_bpe([first, second], 280, [ENDOFTEXT])
    assert trained == train_bpe(both, 280, [ENDOFTEXT])
    assert trained == train_bpe_naive([first, second], 280, [ENDOFTEXT])


def test_progress_bars_do_not_change_the_result(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("the cat sat on the mat " * 50, encoding="utf-8")
    assert train_bpe(path, 270, progress=True) == train_bpe(path, 270)


# Special tokens in training -----------------------------------------------------------------


@pytest.mark.parametrize("train", [train_bpe, train_bpe_naive])
def test_no_merge_crosses_a_special_token(tmp_path, train):
    # If the special tokens were deleted instead of cut on, "a" and "b" would meet 399 times.
    path = tmp_path / "corpus.txt"
    path.write_text(f"a{ENDOFTEXT}b{ENDOFTEXT}" * 200, encoding="utf-8")
    vocab, merges = train(path, 300, [ENDOFTEXT])
    assert merges == []
    assert len(vocab) == 257


@pytest.mark.parametrize("pattern", [GPT2_PATTERN, GPT4_PATTERN])
@pytest.mark.parametrize("train", [train_bpe, train_bpe_naive])
def test_special_tokens_are_never_merged(tmp_path, train, pattern):
    # Without special handling "<|", "endoftext" and "|>" would be the commonest pieces.
    path = tmp_path / "corpus.txt"
    path.write_text((f"hello world{ENDOFTEXT}\n" * 100), encoding="utf-8")
    vocab, merges = train(path, 400, [ENDOFTEXT], pattern=pattern)
    special = ENDOFTEXT.encode()
    learned = [vocab[i] for i in range(257, len(vocab))]
    assert vocab[256] == special
    assert learned, "the corpus should teach some merges"
    assert not any(b"<|" in token or b"|>" in token or b"endof" in token for token in learned)
    assert all(special not in a + b for a, b in merges)


def test_special_token_text_is_ordinary_text_when_not_declared(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text(f"x{ENDOFTEXT}" * 100, encoding="utf-8")
    _, merges = train_bpe(path, 300)
    assert (b"<", b"|") in merges


def test_train_bpe_frees_the_corpus_counts_before_the_merge_loop(tmp_path, monkeypatch):
    # The counts of every distinct pretoken (about 30 MB at 100 MB of text) are read once, into
    # the word table; kept alive through the merge loop they only raised the peak.
    import weakref

    from bpe_course import train as train_module

    path = tmp_path / "corpus.txt"
    path.write_text("low lower newest widest " * 50, encoding="utf-8")
    real_count, real_table = train_module.count_corpus, train_module.shared_word_table
    seen: list[weakref.ref] = []
    alive_at_merge: list[bool] = []

    def counting(*args, **kwargs):
        specials, counts = real_count(*args, **kwargs)
        seen.append(weakref.ref(counts))
        return specials, counts

    def table(words, processes):
        alive_at_merge.append(seen[0]() is not None)
        return real_table(words, processes)

    monkeypatch.setattr(train_module, "count_corpus", counting)
    monkeypatch.setattr(train_module, "shared_word_table", table)
    vocab, merges = train_bpe(path, 270, num_processes=1)
    assert alive_at_merge == [False]
    assert merges == train_bpe_naive(path, 270, num_processes=1)[1]


def outputs_in_a_kernel(source: str) -> list:
    """The outputs of ``source`` run as a notebook's one cell in a fresh Jupyter kernel."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipywidgets")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    return nb.cells[0].outputs


def test_a_progress_bar_in_a_notebook_stores_its_finished_state(tmp_path):
    # Jupyter keeps the text a widget had when it was first shown: a saved notebook (and the
    # slides made from it) showed "pretokenize: 0%" above a finished run. The bar must update
    # its stored output when it closes.
    source = ("from bpe_course.speed.workers import progress_bar\n"
              "with progress_bar(True, 50, 'merges', unit='merge') as bar:\n"
              "    bar.refresh()  # as the package's callers do\n"
              "    for _ in range(50):\n"
              "        bar.update(1)\n")
    outputs = outputs_in_a_kernel(source)
    shown = [output["data"]["text/plain"] for output in outputs
             if output.get("output_type") == "display_data"]
    assert shown, outputs
    assert all("100%" in text and "50/50" in text for text in shown), shown


def test_a_notebook_bar_left_to_the_garbage_collector_closes_quietly(tmp_path):
    # tqdm closes a bar again when it is collected, after its weak references have died: the
    # stored-output update must not run then (it raised ReferenceError inside a training cell)
    source = ("import gc\n"
              "from bpe_course.speed.workers import progress_bar\n"
              "bar = progress_bar(True, 5, 'merges', unit='merge')\n"
              "bar.refresh()\n"
              "bar.update(5)\n"
              "del bar\n"
              "gc.collect()\n"
              "bar = progress_bar(True, 5, 'again')\n"
              "with bar:\n"
              "    bar.refresh()\n"
              "    bar.update(5)\n"
              "del bar\n"
              "gc.collect()\n")
    errors = [output for output in outputs_in_a_kernel(source)
              if output.get("output_type") == "error" or "Error" in str(output.get("text", ""))]
    assert not errors, errors
