"""The fast trainer: CS336's reference merges, and always the naive trainer's answer."""

from __future__ import annotations

import gc
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from operator import add
from pathlib import Path

import pytest
import regex
from hypothesis import event, given, settings
from hypothesis import strategies as st
from strategies import ENDOFTEXT, nasty_text, word_counts

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
from bpe_course.speed import sharing
from bpe_course.speed.counting import count_file_pretokens, find_chunk_boundaries
from bpe_course.speed.sharing import MergeHelpers
from bpe_course.speed.wordtable import MAX_TOKEN_IDS, WordTable, pairs_changed_by

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

#: Words made of a short unit repeated (``abab...``, ``aaaa...``, ``ab ab ...``) plus a tail:
#: merges that touch, overlap and chain inside one word.
repetitive_word = st.builds(
    lambda unit, times, tail: unit * times + tail,
    st.text(st.sampled_from("ab "), min_size=1, max_size=3),
    st.integers(1, 80),
    st.text(st.sampled_from("abc"), max_size=3),
)

#: Counts of 1 (every pair ties with many others), small counts, and huge ones.
word_count = st.just(1) | st.integers(1, 4) | st.integers(2**62, 2**70)


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


# Sharing the first merges: helper processes hold shares of the words, this process the sum
# of the pair counts, until the merges turn light and the helpers hand their words over.


def share_with_helpers(patch: pytest.MonkeyPatch, merges: int | None) -> list[int]:
    """Share every table; keep the helpers for ``merges`` merges (``None``: as long as they
    pay, as in training). Returns a list that gets an item per merge the helpers share."""
    patch.setattr(sharing, "SHARE_WORDS", 1)
    patch.setattr(sharing, "HAND_OVER_PAIRS", 3)  # several messages for a few words
    patch.setattr(os, "cpu_count", lambda: 3)
    shared: list[int] = []
    finish, worth_keeping = MergeHelpers.finish_merge, MergeHelpers.worth_keeping

    def counted(helpers, table, new_pairs):
        shared.extend([1] if helpers.connections else [])
        return finish(helpers, table, new_pairs)

    def for_a_while(helpers):
        return worth_keeping(helpers) if merges is None else len(shared) < merges

    patch.setattr(MergeHelpers, "finish_merge", counted)
    patch.setattr(MergeHelpers, "worth_keeping", for_a_while)
    return shared


@settings(max_examples=30, deadline=None)
@given(
    counts=word_counts(st.sampled_from("abc"))
    | word_counts(st.characters(codec="utf-8"))
    | st.dictionaries(repetitive_word, word_count, min_size=1, max_size=8),
    extra_merges=st.integers(0, 40),
    processes=st.sampled_from([2, 3]),
    merges=st.sampled_from([0, 1, 3, 10**6]),
)
def test_merges_shared_with_helper_processes_match_naive(counts, extra_merges, processes, merges):
    vocab_size = 257 + extra_merges
    with pytest.MonkeyPatch.context() as patch:
        shared = share_with_helpers(patch, merges)
        fast = train_from_counts(counts, vocab_size, [ENDOFTEXT], num_processes=processes)
    assert fast == train_from_counts_naive(counts, vocab_size, [ENDOFTEXT])
    event("shared merges" if shared else "no merge shared")


def test_helpers_hand_their_words_over_when_sharing_stops_paying(monkeypatch):
    # 300 words "the0" to "the299" and 300 merges: after the first (t h, th e), each merge
    # touches a word or two, less work than a message, so the helpers soon hand over.
    shared = share_with_helpers(monkeypatch, None)
    counts = {f"the{index}": 1 + index % 7 for index in range(300)}
    vocab, merges = train_from_counts(counts, 600, num_processes=2)
    assert (vocab, merges) == train_from_counts_naive(counts, 600)
    assert 0 < len(shared) < len(merges) - 50


def listed_words(table: WordTable) -> dict[str, set[tuple[str, int]]]:
    """Each pair's words (with counts) that hold it, among those listed under it."""
    listed = {
        pair: {(table.words[i], table.counts[i]) for i in indices if pair in table.words[i]}
        for pair, indices in table.pair_words.items()
    }
    return {pair: words for pair, words in listed.items() if words}


def words_with_pairs(table: WordTable) -> dict[str, set[tuple[str, int]]]:
    """Each pair's words (with counts) that hold it, found by looking at every word."""
    found = defaultdict(set)
    for word, count in zip(table.words, table.counts):
        for pair in all_pairs(word):
            found[pair].add((word, count))
    return dict(found)


@settings(max_examples=25, deadline=None)
@given(
    counts=word_counts(st.sampled_from("abc")) | st.dictionaries(repetitive_word, word_count),
    shared_merges=st.integers(0, 12),
    merges_after=st.integers(0, 12),
)
def test_a_hand_over_leaves_the_table_one_process_would_have(counts, shared_merges, merges_after):
    # Merge the same pairs in one table, and in two shares of it (this process and a helper)
    # that merge together, then hand over: words, counts, pair counts and the words listed
    # under each pair must agree.
    words = [(word.encode(), count) for word, count in counts.items() if len(word.encode()) > 1]
    alone = WordTable(words)
    with pytest.MonkeyPatch.context() as patch, MergeHelpers([words[1::2]]) as helpers:
        share_with_helpers(patch, shared_merges)
        table = WordTable(words[::2])
        helpers.add_pair_counts(table)
        for step in range(shared_merges + merges_after):
            if not alone.pair_counts:
                break
            pair = max(alone.pair_counts, key=lambda pair: (alone.pair_counts[pair], pair))
            alone.merge(pair, chr(300 + step))
            helpers.start_merge(pair, chr(300 + step), table)
            _, new_pairs = table.merge(pair, chr(300 + step))
            helpers.finish_merge(table, new_pairs)
        if helpers.connections:
            patch.setattr(MergeHelpers, "worth_keeping", lambda helpers: False)
            helpers.start_merge("no pair", chr(299), table)  # a hand-over, then nothing
    assert not helpers.connections
    assert Counter(zip(table.words, table.counts)) == Counter(zip(alone.words, alone.counts))
    assert table.pair_counts == alone.pair_counts
    assert listed_words(table) == words_with_pairs(table) == words_with_pairs(alone)


KILLED_MID_MERGE = """
import os, signal
import bpe_course.train as train
import bpe_course.speed.sharing as sharing
sharing.SHARE_WORDS = 1
sharing.MergeHelpers.worth_keeping = lambda helpers: True

def killed(helpers, table, new_pairs):  # this process dies at the first shared merge
    print(*[process.pid for process in helpers.processes], flush=True)
    os.kill(os.getpid(), signal.SIGKILL)

sharing.MergeHelpers.finish_merge = killed
train.train_from_counts({f"w{i}x": 1 for i in range(50)}, 300, num_processes=2)
"""


def has_ended(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status  # a zombie has ended; nobody has collected it yet


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_helpers_end_when_the_training_process_is_killed():
    # SIGKILL leaves no chance to clean up: a helper must see its pipe close and end, not
    # wait for the next merge forever (it would, while it held the other end itself).
    # (Popen, not run: a helper left waiting would keep the output pipe open for ever.)
    with subprocess.Popen([sys.executable, "-c", KILLED_MID_MERGE], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True) as training:
        helpers = [int(pid) for pid in training.stdout.readline().split()]
        assert training.wait(timeout=60) == -signal.SIGKILL
        assert helpers
    for _ in range(200):  # up to 10 s
        if all(map(has_ended, helpers)):
            break
        time.sleep(0.05)
    left = [pid for pid in helpers if not has_ended(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, "helpers still waiting after their training process was killed"


def train_small_table(counts: dict[str, int]) -> tuple:
    return train_from_counts(counts, 300, num_processes=2)


def test_training_in_a_pool_worker_starts_no_helpers(monkeypatch):
    # A pool's workers are daemonic, and a daemonic process may not start processes: the
    # merge loop then runs in the worker alone instead of failing.
    share_with_helpers(monkeypatch, 10**6)
    counts = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply(train_small_table, (counts,)) == train_from_counts_naive(counts, 300)


def test_a_helper_process_that_dies_is_reported(monkeypatch):
    share_with_helpers(monkeypatch, 10**6)
    parent, merge = os.getpid(), WordTable.merge

    def dies_in_a_helper(table, pair, new_token):
        if os.getpid() != parent:
            os._exit(3)  # as if the system had killed it, say for memory
        return merge(table, pair, new_token)

    monkeypatch.setattr(WordTable, "merge", dies_in_a_helper)
    with pytest.raises(RuntimeError, match="helper process of the merge loop stopped"):
        train_from_counts({"low": 5, "lower": 2, "newest": 6}, 300, num_processes=2)


def all_pairs(word: str) -> Counter[str]:
    return Counter(map(add, word, word[1:]))


@given(
    word=st.text(st.sampled_from("abN"), max_size=30),
    pair=st.sampled_from(["aa", "ab", "ba", "bb"]),
)
def test_pairs_changed_by_a_merge_are_exactly_the_difference(word, pair):
    # Before: the pairs the merge removes, the merged occurrences, and the rest.
    # After: the pairs it adds, and the same rest. Lost pairs never hold the new token N
    # (it is not in the word yet, so "N" stands for some other token here), gained ones do.
    word = word.replace("N", "c")
    merged = word.replace(pair, "N")
    lost, gained = pairs_changed_by(word, merged, pair)
    before, after = all_pairs(word), all_pairs(merged)
    before.subtract(lost)
    before.subtract({pair: word.count(pair)})
    after.subtract(gained)
    assert min(before.values(), default=0) >= 0 and min(after.values(), default=0) >= 0
    assert +before == +after
    assert all("N" in gained_pair for gained_pair in gained)
    assert all("N" not in lost_pair for lost_pair in lost)


def test_token_ids_beyond_one_character_are_refused_before_training():
    # A word of 1.2 million bytes could take more merges than there are characters.
    with pytest.raises(ValueError, match="vocab_size=2000000 could need token id"):
        train_from_counts({"a" * 1_200_000: 1}, 2_000_000)
    # A huge vocab_size on a small corpus is fine: training stops when no pair is left.
    assert len(train_from_counts({"ab": 1}, 10 * MAX_TOKEN_IDS)[1]) == 1


@pytest.mark.parametrize("first_new_id", [0xD800, 0x10000])
def test_new_token_ids_in_the_surrogate_range_and_beyond_two_bytes(first_new_id):
    # Enough special tokens push the first merged token's id (and so its character in the
    # word table) to the first surrogate code point, or past the two-byte characters.
    special_tokens = [f"<s{i}>" for i in range(first_new_id - 256)]
    counts = {"abababab": 3, "aaaaa": 2, "ba ba": 5, "abcabcab": 1, "cab": 4}
    vocab_size = first_new_id + 20
    fast = train_from_counts(counts, vocab_size, special_tokens)
    assert fast == train_from_counts_naive(counts, vocab_size, special_tokens)
    assert min(fast[0].keys() - range(first_new_id)) == first_new_id


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


SPECIAL_SETS = [[], [ENDOFTEXT], [ENDOFTEXT, "<pad>"], [ENDOFTEXT, ENDOFTEXT * 2]]


@st.composite
def corpora(draw) -> tuple[list[str], str]:
    """(special tokens, corpus text): documents with special tokens (or newlines) between."""
    special_tokens = draw(st.sampled_from(SPECIAL_SETS))
    documents = draw(st.lists(nasty_text, max_size=6))
    if special_tokens:
        separator = st.lists(st.sampled_from(special_tokens), max_size=2).map("".join)
    else:
        separator = st.sampled_from(["", "\n", "a\nb", ".\nx", " \n "])
    text = draw(separator)
    for document in documents:
        text += document + draw(separator)
    return special_tokens, text


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


@given(corpus=corpora(), pattern=st.sampled_from([GPT2_PATTERN, GPT4_PATTERN, O200K_PATTERN]))
def test_chunked_counts_equal_counts_of_the_whole_text(tmp_path, corpus, pattern):
    special_tokens, text = corpus
    path = tmp_path / "corpus.txt"
    path.write_bytes(text.encode("utf-8"))
    for chunk_bytes in (1, 7, 50):
        counts = count_file_pretokens(
            [str(path)], special_tokens, pattern, num_processes=1, chunk_bytes=chunk_bytes
        )
        assert counts == count_pretokens(text, special_tokens, pattern)


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
