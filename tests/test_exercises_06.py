"""Notebooks 06 (encoding in practice) and 06b (build your own tokenizer): their exercise
checks reject wrong answers and accept the solutions.

The checkers live in :mod:`bpe_course.course.checks.encoding_in_practice` (06) and
:mod:`bpe_course.course.checks.build_your_own` (06b); the solutions are the notebooks' hidden
``solution`` cells, run here with the checks modules' names and the few notebook globals a
solution uses. Every wrong answer below is one a learner could plausibly write; each must make
its checker return False with a hint that names the mistake.
"""

from __future__ import annotations

import codecs
import json
import random
from types import SimpleNamespace
from typing import Any

import pytest
import regex
from notebook_cells import (
    assert_accepted,
    assert_rejected,
    assert_rejected_in_chinese,
    hinted_in_chinese,
    run_cell_starting,
    run_cells,
)
from test_exercises_03 import split_in_given_order, split_unescaped

from bpe_course import GPT2_PATTERN, pretokenize, split_on_special_tokens
from bpe_course.course.checks import build_your_own, encoding_in_practice
from bpe_course.course.data import python_source
from bpe_course.formats.gpt2 import bytes_to_unicode

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def nb06() -> dict[str, Any]:
    namespace = {"__name__": "exercises", **vars(encoding_in_practice), **vars(build_your_own),
                 "regex": regex, "json": json, "bytes_to_unicode": bytes_to_unicode,
                 "GPT2_PATTERN": GPT2_PATTERN, "pieces": SimpleNamespace()}
    run_cells("06_encoding_in_practice", "solution", namespace)
    notebook = "06b_build_your_own_tokenizer"
    run_cell_starting(notebook, "class TokenizerBase", namespace)  # SolutionTokenizer's base
    run_cells(notebook, "solution", namespace)
    pieces = ["encode_stream", "encode_pretoken", "split_on_specials", "save_gpt2", "load_gpt2"]
    for piece in pieces:
        setattr(namespace["pieces"], piece, namespace[f"solution_{piece}"])
    return namespace


def stream_variant(hold_pretokens=2, specials="longest fits", whitespace=True, flush=True):
    """The solution's hold-back with one rule weakened.

    ``specials``: "longest fits" (right: a complete special token is final once the longest
    special token fits after its start), "any end" (holds back any end of the text that
    begins a special token, even the end of a complete longer one, which it cuts in two),
    "after the last one" (a complete special token is always final), or "ignored".
    ``whitespace``: hold back more pretokens while the text before the cut ends in whitespace.
    """

    def encode_stream(chunks, tokenizer):
        names = list(tokenizer.special_tokens)
        longest = max(map(len, names), default=0)
        held = ""
        for chunk in chunks:
            text = held + chunk
            parts = split_on_special_tokens(text, names)
            cut, start = len(text), 0
            for index, part in enumerate(parts):
                if specials == "longest fits" and index % 2 and start + longest > len(text):
                    cut = start
                    break
                start += len(part)
            ends = text if specials == "any end" else parts[-1] if cut == len(text) else ""
            if specials != "ignored":
                cut -= max(
                    (n for name in names for n in range(1, len(name)) if ends.endswith(name[:n])),
                    default=0,
                )
            tail = split_on_special_tokens(text[:cut], names)[-1]
            pretokens = pretokenize(tail, tokenizer.pattern) if tail else []
            kept = len(pretokens) - hold_pretokens
            while whitespace and kept > 0 and pretokens[kept - 1][-1].isspace():
                kept -= 1
            cut -= sum(map(len, pretokens[max(kept, 0) :]))
            yield from tokenizer.encode(text[:cut])
            held = text[cut:]
        if flush:
            yield from tokenizer.encode(held)

    return encode_stream


def stream_each_chunk(chunks, tokenizer):
    for chunk in chunks:
        yield from tokenizer.encode(chunk)


def stream_pretokens_across_specials(chunks, tokenizer):
    """Holds back the right end, but counts two pretokens across complete special tokens."""
    held = ""
    for chunk in chunks:
        text = held + chunk
        cut = min([len(text)] + [len(text) - n for s in tokenizer.special_tokens
                                 for n in range(1, len(s)) if text.endswith(s[:n])])
        cut -= sum(map(len, pretokenize(text[:cut], tokenizer.pattern)[-2:]))
        yield from tokenizer.encode(text[:cut])
        held = text[cut:]
    yield from tokenizer.encode(held)


def stream_read_all(chunks, tokenizer):
    yield from tokenizer.encode("".join(chunks))


def stream_as_list(chunks, tokenizer):
    return tokenizer.encode("".join(chunks))


ENCODE_STREAM_WRONG = [  # check_encode_stream: (wrong answer, what its hint must say)
        (stream_each_chunk, "a chunk can end inside a pretoken"),
        (stream_variant(hold_pretokens=1), "hold back the last two pretokens"),
        (stream_variant(specials="ignored"), "a special token can arrive in pieces"),
        (stream_variant(specials="after the last one"), "may begin a longer one"),
        (stream_variant(specials="any end"), "cut it in two"),
        (stream_variant(whitespace=False), "do not let a cut follow whitespace"),
        (stream_variant(flush=False), "ended early"),
        (stream_pretokens_across_specials, "cuts inside it"),
    (stream_read_all, "Yield the ids of the finished text before reading on"),
        (stream_as_list, "make it a generator"),
]


def test_the_reference_encode_stream_is_right_on_many_random_streams(nb06):
    # The checker's cases are a sample; the reference solution must be right beyond them,
    # on texts built to meet its traps (whitespace runs before symbols, special tokens that
    # begin longer ones, arriving in pieces) and on real source read line by line.
    solution = nb06["solution_encode_stream"]
    tokenizers = nb06["checker_tokenizers"]()
    parts = ["we", "'", "ll", " ", "  ", "\n", "\n\n", "\r\n", "\t", "word", "Word", "123", ".",
             "!?", '"""', "é", "🙂", "<|endoftext|>", "<|endof", "text|>", "<pad>", "<", "|", " \n"]
    rng = random.Random(9)
    for _ in range(3000):
        text = "".join(rng.choices(parts, k=rng.randint(0, 14)))
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randint(0, 7))))
        chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
        for tokenizer in tokenizers:
            assert list(solution(iter(chunks), tokenizer)) == tokenizer.encode(text), chunks
    lines = python_source(200_000).splitlines(keepends=True)
    for tokenizer in tokenizers:
        assert list(solution(iter(lines), tokenizer)) == tokenizer.encode("".join(lines))


def documents_joined(**encode_options):
    """Joins the documents with the separator first, then encodes the whole text once."""
    return lambda enc, documents: enc.encode(EOT.join(documents), **encode_options)


def documents_ordinary_with(join):
    """Each document as text, separators placed by ``join(pieces, separator id)``."""

    def encode_documents(enc, documents):
        return join([enc.encode_ordinary(d) for d in documents], enc.encode_single_token(EOT))

    return encode_documents


def after_each(pieces, separator):
    return [i for piece in pieces for i in [*piece, separator]]


ENCODE_DOCUMENTS_WRONG = [  # check_encode_documents: (wrong answer, what its hint must say)
        (documents_joined(), "a document is text from outside"),
        (documents_joined(allowed_special=set()), "a document is text from outside"),
        (documents_joined(allowed_special="all"), "a document's own text became a special token"),
        (lambda enc, documents: enc.encode_ordinary(EOT.join(documents)), "no separator id"),
        (lambda enc, documents: enc.encode(EOT.join(d.replace("<|", "") for d in documents),
                                           allowed_special={EOT}), "decode to"),
        (documents_ordinary_with(after_each), "between documents only"),
        (lambda enc, documents: None, "returned None"),
]


def decode_whole_input(token_bytes):
    """Reads every piece before yielding anything."""
    yield b"".join(token_bytes).decode("utf-8", errors="replace")


def decode_to_list(token_bytes):
    """Returns a list instead of yielding."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    return [decoder.decode(piece) for piece in token_bytes] + [decoder.decode(b"", final=True)]


def decode_each_piece(token_bytes):
    for piece in token_bytes:
        yield piece.decode("utf-8", errors="replace")


def decode_dropping_partials(token_bytes):
    for piece in token_bytes:
        yield piece.decode("utf-8", errors="ignore")


def decode_whole_buffer(token_bytes):
    """Holds every finished character while the buffer also ends inside one."""
    buffer = b""
    for piece in token_bytes:
        buffer += piece
        try:
            text = buffer.decode("utf-8")
        except UnicodeDecodeError:
            continue
        buffer = b""
        yield text
    if buffer:
        yield buffer.decode("utf-8", errors="replace")


def decode_without_flush(token_bytes):
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for piece in token_bytes:
        yield decoder.decode(piece)


def decode_strict(token_bytes):
    decoder = codecs.getincrementaldecoder("utf-8")()
    for piece in token_bytes:
        yield decoder.decode(piece)
    yield decoder.decode(b"", final=True)


STREAM_DECODE_WRONG = [  # check_stream_decode: (wrong answer, what its hint must say)
        (decode_whole_input, "while still holding"),
        (decode_to_list, "make it a generator"),
        (decode_each_piece, "the output has U+FFFD"),
        (decode_dropping_partials, "joined output"),
        (decode_whole_buffer, "while still holding"),
        (decode_strict, "decode with errors='replace'"),
    (decode_without_flush, "final U+FFFD"),
]


def pretoken_by_rule(choose):
    """Join pairs until none is a merge, choosing which pair with ``choose(ranked pairs)``."""

    def encode_pretoken(data, ranks):
        parts = [bytes([byte]) for byte in data]
        while True:
            ranked = [(ranks[p], i) for i, p in enumerate(zip(parts, parts[1:])) if p in ranks]
            if not ranked:
                return parts
            _, i = choose(ranked)
            parts[i : i + 2] = [parts[i] + parts[i + 1]]

    return encode_pretoken


def pretoken_one_pass(data, ranks):
    """Applies each merge once, in rank order, but only left to right in a single sweep."""
    parts = [bytes([byte]) for byte in data]
    i = 0
    while i < len(parts) - 1:
        if (parts[i], parts[i + 1]) in ranks:
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        else:
            i += 1
    return parts


ENCODE_PRETOKEN_WRONG = [  # check_encode_pretoken: (wrong answer, what its hint must say)
    (pretoken_by_rule(lambda ranked: ranked[0]), "lowest rank"),  # the leftmost merge pair
    (pretoken_by_rule(max), "lowest rank"),  # the latest-learned merge first
    (pretoken_by_rule(lambda ranked: min(ranked, key=lambda r: (r[0], -r[1]))), "leftmost"),
    (pretoken_one_pass, "lowest rank"),
]


def split_dropping_empty(text, special_tokens):
    return [part for part in split_on_special_tokens(text, special_tokens) if part]


def split_dropping_the_last_empty(text, special_tokens):
    """A loop that adds the rest of the text only when there is some."""
    parts = split_on_special_tokens(text, special_tokens)
    return parts[:-1] if len(parts) > 1 and parts[-1] == "" else parts


def split_with_an_extra_empty(text, special_tokens):
    """A loop that always adds one more '' after the rest of the text."""
    parts = split_on_special_tokens(text, special_tokens)
    return parts + [""] if special_tokens and parts[-1] == "" else parts


def split_dropping_tokens(text, special_tokens):
    if not special_tokens:
        return [text]
    return regex.split("|".join(map(regex.escape, special_tokens)), text)


SPLIT_SPECIAL_WRONG = [  # check_split_on_specials: (wrong answer, what its hint must say)
        (split_unescaped, "escape the tokens (regex.escape)"),
        (split_in_given_order, "longer special tokens first"),
        (split_dropping_tokens, "keep the special tokens as items"),
    (split_dropping_empty, "keep the empty strings"),
    (split_dropping_the_last_empty, "the ordinary text after it is ''"),
    (split_with_an_extra_empty, "one '' too many at the end"),
]


def save_variant(header=True, swapped=False, spelling="gpt2"):
    table = bytes_to_unicode()

    def spell(token):
        return "".join(table[b] for b in token) if spelling == "gpt2" else token.decode("latin-1")

    def save_gpt2(vocab, merges, vocab_path, merges_path):
        entries = {str(i): spell(t) for i, t in vocab.items()} if swapped else {
            spell(t): i for i, t in vocab.items()}
        with open(vocab_path, "w", encoding="utf-8") as file:
            json.dump(entries, file, ensure_ascii=False)
        with open(merges_path, "w", encoding="utf-8") as file:
            if header:
                file.write("#version: 0.2\n")
            file.writelines(f"{spell(a)} {spell(b)}\n" for a, b in merges)

    return save_gpt2


SAVE_GPT2_WRONG = [  # check_save_gpt2: (wrong answer, what its hint must say)
        (save_variant(header=False), "GPT-2's files start with '#version: 0.2'"),
        (save_variant(swapped=True), "{token: id}, not {id: token}"),
        (save_variant(spelling="latin-1"), "spell every byte"),
]


def load_variant(skip_header=True, as_bytes=True):
    byte_of = {char: byte for byte, char in bytes_to_unicode().items()}

    def read(spelled):
        return bytes(byte_of[c] for c in spelled) if as_bytes else spelled

    def load_gpt2(vocab_path, merges_path):
        with open(vocab_path, encoding="utf-8") as file:
            vocab = {i: read(token) for token, i in json.load(file).items()}
        with open(merges_path, encoding="utf-8") as file:
            lines = [line.rstrip("\n") for line in file if line.strip()]
        if skip_header:
            lines = [line for line in lines if not line.startswith("#version")]
        return vocab, [tuple(map(read, line.split(" "))) for line in lines]

    return load_gpt2


LOAD_GPT2_WRONG = [  # check_load_gpt2: (wrong answer, what its hint must say)
        (load_variant(skip_header=False), "is not a merge"),
        (load_variant(as_bytes=False), "map ids to bytes"),
        (lambda vocab_path, merges_path: None, "return (vocab, merges)"),
]


@pytest.fixture(scope="module")
def wrong_tokenizers(nb06) -> dict[str, type]:
    """Three plausible MyTokenizer classes, each with one mistake."""
    base, pieces = nb06["TokenizerBase"], nb06["pieces"]

    def encode_with(self, text, pattern, specials):
        ids = []
        parts = pieces.split_on_specials(text, list(self.special_tokens)) if specials else [text]
        for index, part in enumerate(parts):
            if index % 2:
                ids.append(self.special_tokens[part])
                continue
            for pretoken in regex.findall(pattern or self.pattern, part):
                tokens = pieces.encode_pretoken(pretoken.encode(), self.ranks)
                ids += [self.id_of[t] for t in tokens]
        return ids

    def decode(self, ids):
        return b"".join(self.vocab[i] for i in ids).decode("utf-8", errors="replace")

    def make(pattern=None, specials=True, strict=False):
        def strict_decode(self, ids):
            return b"".join(self.vocab[i] for i in ids).decode("utf-8")

        return type("MyTokenizer", (base,), {
            "encode": lambda self, text: encode_with(self, text, pattern, specials),
            "decode": strict_decode if strict else decode,
        })

    return {
        "ignores special tokens": make(specials=False),
        "always GPT-2's pattern": make(pattern=GPT2_PATTERN),
        "strict decode": make(strict=True),
    }


MY_TOKENIZER_WRONG = [  # check_my_tokenizer: (a class in wrong_tokenizers, what its hint must say)
    ("ignores special tokens", "cut out the special tokens first"),
    ("always GPT-2's pattern", "use self.pattern"),
    ("strict decode", "ids can end inside a character"),
]


# Every checker against every wrong answer above, and against its solution -------------------

WRONG = {
    "check_encode_stream": ENCODE_STREAM_WRONG,
    "check_encode_documents": ENCODE_DOCUMENTS_WRONG,
    "check_stream_decode": STREAM_DECODE_WRONG,
    "check_split_on_specials": SPLIT_SPECIAL_WRONG,
    "check_save_gpt2": SAVE_GPT2_WRONG,
    "check_load_gpt2": LOAD_GPT2_WRONG,
    "check_encode_pretoken": ENCODE_PRETOKEN_WRONG,
    "check_my_tokenizer": MY_TOKENIZER_WRONG,
}
REJECTIONS = [(check, wrong, hint) for check, wrongs in WRONG.items() for wrong, hint in wrongs]


@pytest.mark.parametrize(
    ("check", "wrong", "hint"),
    REJECTIONS,
    ids=[f"{check}: {hint}" for check, _, hint in REJECTIONS],
)
def test_check_rejects_the_wrong_answer(request, nb06, capsys, check, wrong, hint):
    if isinstance(wrong, str):  # a class that needs the notebook's base class
        wrong = request.getfixturevalue("wrong_tokenizers")[wrong]
    assert_rejected(capsys, nb06[check], (wrong,), hint)


SOLUTIONS = [
    ("check_encode_stream", "solution_encode_stream"),
    ("check_encode_documents", "solution_encode_documents"),
    ("check_stream_decode", "solution_stream_decode"),
    ("check_encode_pretoken", "solution_encode_pretoken"),
    ("check_split_on_specials", "solution_split_on_specials"),
    ("check_save_gpt2", "solution_save_gpt2"),
    ("check_load_gpt2", "solution_load_gpt2"),
    ("check_my_tokenizer", "SolutionTokenizer"),
]


@pytest.mark.parametrize(("check", "solution"), SOLUTIONS)
def test_check_accepts_the_solution(nb06, capsys, check, solution):
    assert_accepted(capsys, nb06[check], (nb06[solution],))


# The Chinese edition: every wrong answer above gets its hint in Chinese, in the same order ---

ZH_HINTS = {
    "check_encode_stream": ["一个块可能在预分词片段的中间结束", "要留住最后两个预分词片段",
                            "特殊词元可能分几次到达", "可能是更长的特殊词元",
                            "结果把它切成了两半", "切点不能紧跟在空白字符后面", "提前结束了",
                            "会把特殊词元从中间切开", "它的 id 要先交出去再往下读",
                            "要把它写成生成器"],
    "check_encode_documents": ["文档是外来的文本", "文档是外来的文本",
                               "文档自己的文字变成了特殊词元", "输出里没有分隔符的 id",
                               "这些 id 解码出来是", "最后一篇文档后面多了一个分隔符",
                               "encode_documents 返回了 None"],
    "check_stream_decode": ["它去读下一段时还留着", "而不是返回列表的函数",
                            "输出里出现了 U+FFFD", "输出拼起来是", "它去读下一段时还留着",
                            "解码时要用 errors='replace'", "输出末尾少了一个 U+FFFD"],
    "check_split_on_specials": ["先把特殊词元转义（regex.escape）", "先试更长的特殊词元",
                                "特殊词元本身也要作为列表里的一项保留", "空字符串都要保留",
                                "它后面的普通文本是 ''", "末尾多了一个 ''"],
    "check_save_gpt2": ["GPT-2 的文件以 '#version: 0.2' 开头",
                        "是 {token: id}，而不是 {id: token}", "用 bytes_to_unicode 拼写每一个字节"],
    "check_load_gpt2": ["'#version' 这一行不是合并规则", "词表应该把 id 映射到字节",
                        "要返回 (vocab, merges)"],
    "check_encode_pretoken": ["找合并次序最小的相邻字节对", "找合并次序最小的相邻字节对",
                              "取最左边那个", "找合并次序最小的相邻字节对"],
    "check_my_tokenizer": ["要先把特殊词元切出来", "要用 self.pattern",
                           "id 序列可能在一个字符的中间结束"],
}


@hinted_in_chinese(WRONG, ZH_HINTS)
def test_06_checks_hint_in_chinese(request, nb06, capsys, check, wrong, hint, english):
    if isinstance(wrong, str):  # a class that needs the notebook's base class
        wrong = request.getfixturevalue("wrong_tokenizers")[wrong]
    assert_rejected_in_chinese(capsys, nb06[check], (wrong,), hint, english)

