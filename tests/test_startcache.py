"""The start-up cache: a hit gives the tokenizer an uncached build gives, and a cache that is
damaged, foreign, unwritable or turned off only ever means the slow path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bpe_course import Tokenizer, openai, train_from_counts
from bpe_course.formats import rankbpe
from bpe_course.formats.rankbpe import RankTokenizer, cached_rank_tokenizer
from bpe_course.safety.specials import SpecialTokens
from bpe_course.speed import startcache
from bpe_course.speed.startcache import CACHE_ENV

SAMPLE = "Hello, world! naïve café, 東京タワー 😀 <|endoftext|> 12345\n\tdef f(x): return x"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    return folder


def tokenizer_files(cache: Path) -> list[Path]:
    """The cache files of tokenizers: not those of split patterns' translations (written
    by the first tokenizer of a pattern in this process, :mod:`bpe_course.speed.fastsplit`)."""
    return [path for path in cache.iterdir() if not path.name.startswith("split-pattern-")]


def state(tokenizer: Tokenizer) -> tuple:
    """Everything a tokenizer is made of, and what it makes of a sample."""
    pairs, merged, whole = tokenizer.built_tables()
    return (type(tokenizer), tokenizer.name, tokenizer.pattern, tokenizer.vocab,
            tokenizer.merges, tokenizer.special_tokens, pairs, merged, whole,
            tokenizer._ids_of, tokenizer._byte_ids, tokenizer.encode(SAMPLE),
            tokenizer.encode_ordinary(SAMPLE), getattr(tokenizer, "ranks", None))


def small() -> Tokenizer:
    vocab, merges = train_from_counts({"low": 5, "lower": 2, "newest": 6, "café": 3}, 270)
    return Tokenizer(vocab, merges, ["<|endoftext|>"], name="small")


class Builds:
    """A build that counts its calls."""

    def __init__(self, make=small) -> None:
        self.calls = 0
        self.make = make

    def __call__(self):
        self.calls += 1
        return self.make()


def cached_small(builds: Builds) -> Tokenizer:
    return startcache.cached_tokenizer("small", ["settings"], builds)


def test_a_hit_reads_the_file_and_builds_the_same_tokenizer(cache):
    builds = Builds()
    first = cached_small(builds)
    files = tokenizer_files(cache)
    assert builds.calls == 1 and len(files) == 1 and files[0].name.startswith("small-")
    again = cached_small(builds)
    assert builds.calls == 1  # read, not built
    assert state(again) == state(first) == state(small())


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_openai_encodings_from_the_cache_equal_the_uncached_build(name, cache, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, "off")
    uncached = getattr(openai, name).__wrapped__()
    monkeypatch.setenv(CACHE_ENV, str(cache))
    getattr(openai, name).__wrapped__()  # builds and writes the cache

    def no_build(*args, **kwargs):
        raise AssertionError("built again instead of read from the cache")

    monkeypatch.setattr(openai, "load_tiktoken_file", no_build)
    monkeypatch.setattr(openai, "load_gpt2_files", no_build)
    hit = getattr(openai, name).__wrapped__()
    assert state(hit) == state(uncached)
    assert hit.merges == uncached.merges  # made from the tables on first use


def damage_flip(data: bytes) -> bytes:
    return data[:-10] + bytes([data[-10] ^ 1]) + data[-9:]


@pytest.mark.parametrize("damage", [
    damage_flip,
    lambda data: data[: len(data) // 2],  # cut short
    lambda data: b"",
    lambda data: os.urandom(len(data)),  # not ours at all
    lambda data: data.replace(b'"key": "', b'"key": "0', 1),  # another build's file
    lambda data: data[:30] + b"\xff" * 8 + data[38:],  # an absurd header length
])
def test_a_damaged_or_foreign_file_is_ignored_and_rebuilt(cache, damage):
    builds = Builds()
    cached_small(builds)
    (path,) = tokenizer_files(cache)
    path.write_bytes(damage(path.read_bytes()))
    assert state(cached_small(builds)) == state(small())
    assert builds.calls == 2
    assert state(cached_small(builds)) == state(small())  # the file was written again
    assert builds.calls == 2


def test_a_file_whose_tables_do_not_fit_is_rebuilt(cache, monkeypatch):
    builds = Builds()
    cached_small(builds)
    real_unpack = startcache.unpack_tokens
    monkeypatch.setattr(startcache, "unpack_tokens", lambda sections: real_unpack(sections)[1:])
    assert state(cached_small(builds)) == state(small()) and builds.calls == 2


def test_an_unwritable_or_disabled_cache_only_means_building(tmp_path, monkeypatch):
    blocker = tmp_path / "a file"
    blocker.write_text("not a folder")
    for setting in (str(blocker / "cache"), "off", ""):
        monkeypatch.setenv(CACHE_ENV, setting)
        builds = Builds()
        assert state(cached_small(builds)) == state(cached_small(builds)) == state(small())
        assert builds.calls == 2
    assert blocker.read_text() == "not a folder" and len(list(tmp_path.iterdir())) == 1


def test_the_default_folder_follows_xdg_then_home(monkeypatch, tmp_path):
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert startcache.cache_folder() == tmp_path / "bpe_course"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert startcache.cache_folder() == tmp_path / "home" / ".cache" / "bpe_course"


def test_other_settings_get_another_file(cache):
    builds = Builds()
    startcache.cached_tokenizer("small", ["one"], builds)
    startcache.cached_tokenizer("small", ["two"], builds)
    assert builds.calls == 2 and len(tokenizer_files(cache)) == 2


def test_two_processes_filling_the_cache_at_once(cache):
    script = ("from bpe_course import openai; "
              f"print(openai.gpt2().encode_ordinary({SAMPLE!r}))")
    env = dict(os.environ, PYTHONPATH=str(Path(openai.__file__).parent.parent))
    children = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                                 text=True, env=env) for _ in range(2)]
    outputs = [child.communicate(timeout=300)[0] for child in children]
    assert all(child.returncode == 0 for child in children)
    after = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           env=env, check=True).stdout
    expected = repr(openai.gpt2().encode_ordinary(SAMPLE))
    assert [out.strip() for out in [*outputs, after]] == [expected] * 3
    # no temporary file left: the tokenizer's file and its split pattern's translation
    assert sorted(path.name.split("-")[0] + path.suffix for path in cache.iterdir()) == [
        "gpt2.cache", "split.cache"]


def test_rank_tables_give_what_the_reachability_check_gives():
    """The skipped check (see ``openai.rank_tables``) would have found every token whole."""
    path = openai.openai_file("cl100k_base.tiktoken")
    fast = openai.load_tiktoken_file(path, openai.GPT4_PATTERN, openai.CL100K_SPECIAL_TOKENS)
    checked = Tokenizer(fast.vocab, fast.merges, list(fast.special_tokens), fast.pattern)
    assert fast.built_tables() == checked.built_tables()


@pytest.mark.parametrize("offset, normalization", [(0, None), (1000, "NFC")])
def test_a_rank_tokenizer_from_the_cache_equals_its_build(cache, offset, normalization):
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257, b"\xe6\x9d": 258,
                                                   "é".encode(): 259}
    specials = {"<|end|>": 260 + offset} if offset else {"<|end|>": 260}

    def make() -> RankTokenizer:
        return RankTokenizer(ranks, r"\S+|\s+", specials, offset=offset,
                             normalization=normalization, name="tiny")

    builds = Builds(make)
    first = cached_rank_tokenizer("tiny", [offset], builds)
    again = cached_rank_tokenizer("tiny", [offset], builds)
    assert builds.calls == 1
    assert state(again) == state(first) == state(make())
    assert repr(again) == repr(make()) and again.offset == offset


def test_an_open_model_from_the_cache_equals_its_build(cache, monkeypatch):
    pytest.importorskip("llama_models")
    from bpe_course import models, openai

    monkeypatch.setenv(CACHE_ENV, "off")
    uncached = models.open_model.__wrapped__("llama3")
    monkeypatch.setenv(CACHE_ENV, str(cache))
    models.open_model.__wrapped__("llama3")

    def no_read(path):
        raise AssertionError("read the rank file instead of the cache")

    monkeypatch.setattr(openai, "read_tiktoken_ranks", no_read)  # models loads it when asked
    assert state(models.open_model.__wrapped__("llama3")) == state(uncached)


def test_a_subclass_is_built_but_not_stored(cache):
    class Mine(RankTokenizer):
        pass

    tokenizer = Mine({bytes([b]): b for b in range(256)}, r"\S+|\s+")
    assert rankbpe.pack_rank_tokenizer(tokenizer) is None
    assert startcache.pack_tokenizer(tokenizer) is None


def test_importing_the_openai_door_skips_importlib_metadata():
    """50 ms of a cold start went to importing :mod:`importlib.metadata` to find a file."""
    script = ("import sys, bpe_course.openai, bpe_course.models\n"
              "print('importlib.metadata' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True, cwd=Path(openai.__file__).parent.parent)
    assert result.stdout.strip() == "False"


def test_special_tokens_finder_is_compiled_when_first_needed():
    specials = SpecialTokens({f"<|x{i}|>": i for i in range(300)})
    assert specials._finder_of_all is False  # encode_ordinary never needs it
    assert specials.split("a<|x7|>b", "all", "all", "encode") == ["a", "<|x7|>", "b"]
    assert specials._finder_of_all is not False


def test_a_tokenizer_json_from_the_cache_equals_its_build(cache, tmp_path, monkeypatch):
    from bpe_course.formats import hf_json
    from bpe_course.models import cached_tokenizer_json

    path = tmp_path / "tokenizer.json"
    small().save_hf(path)
    uncached = hf_json.from_tokenizer_json(path, name="t")
    first = cached_tokenizer_json(path, ["t-sha"], name="t")

    def no_read(*args, **kwargs):
        raise AssertionError("read the file instead of the cache")

    monkeypatch.setattr(hf_json, "from_tokenizer_document", no_read)
    again = cached_tokenizer_json(path, ["t-sha"], name="t")
    assert state(again) == state(first) == state(uncached)
    assert (again.added_tokens, again.normalizations, again.ignore_merges, again.pattern) == (
        uncached.added_tokens, uncached.normalizations, uncached.ignore_merges, uncached.pattern)


def test_a_sentencepiece_model_from_the_cache_equals_its_build(cache, monkeypatch):
    pytest.importorskip("mistral_common")
    from bpe_course import models
    from bpe_course.formats import sentencepiece

    monkeypatch.setenv(CACHE_ENV, "off")
    uncached = models.open_model.__wrapped__("mistral_v1")
    monkeypatch.setenv(CACHE_ENV, str(cache))
    models.open_model.__wrapped__("mistral_v1")

    def no_read(*args, **kwargs):
        raise AssertionError("read the model file instead of the cache")

    monkeypatch.setattr(sentencepiece, "load_sentencepiece", no_read)
    hit = models.open_model.__wrapped__("mistral_v1")
    assert hit.proto == uncached.proto and repr(hit) == repr(uncached)
    assert hit.encode(SAMPLE) == uncached.encode(SAMPLE)
    assert hit.encode_ordinary(SAMPLE) == uncached.encode_ordinary(SAMPLE)


def test_a_special_token_spelled_like_a_ranked_one_keeps_both_ids(cache):
    ranks = {bytes([b]): b for b in range(256)} | {b"<s": 256, b"<s>": 257}

    def make() -> RankTokenizer:
        return RankTokenizer(ranks, r"\S+|\s+", {"<s>": 300}, name="twin")

    cached_rank_tokenizer("twin", [], make)
    for tokenizer in (make(), cached_rank_tokenizer("twin", [], make)):
        assert tokenizer.encode_ordinary("<s>") == [257]  # the ranked token, read as text
        assert tokenizer.encode("<s>") == [300]  # the special token
        assert tokenizer.decode([257, 300]) == "<s><s>"
