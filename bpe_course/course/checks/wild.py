"""Notebook 07's checks: o200k_base's rule for words, and SentencePiece pieces decoded.

Each checker runs the learner's function on many cases, compares it with the real thing
(o200k_base's split pattern; a small SentencePiece model's own decoder), and on the first
difference prints a hint naming the likely mistake, in English and in Chinese (``zh=``).
"""

from __future__ import annotations

import io
import random
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import regex

from ...pretokens import O200K_PATTERN
from ..data import course_text
from .harness import Hint, attempt, correct, not_yet, say, short

__all__ = ["check_decode_pieces", "check_o200k_word_pieces"]


# o200k_word_pieces -----------------------------------------------------------------------


def word_cases(seed: int = 0, count: int = 300) -> list[str]:
    """Words of upper- and lower-case letters, ASCII and accented, of every shape."""
    rng = random.Random(seed)
    words = ["camelCaseWord", "iPhone", "HTTPServer", "XMLHttpRequest", "ABC", "abc", "aBC",
             "AbCd", "déjàVu", "ÉCOLE", "Éa", "straßeX", "A", "z"]
    for _ in range(count):
        letters = rng.choice(["ABCÉ", "abcéß", "AaBbÉéß", "ABCÀabcà"])
        words.append("".join(rng.choice(letters) for _ in range(rng.randint(1, 12))))
    return words


def capital_runs_split(word: str) -> list[str]:
    """What a camel-case splitter gives: a run of capitals hands its last one to the next
    word (``HTTPServer`` -> ``HTTP``, ``Server``)."""
    return regex.findall(r"\p{Lu}+(?!\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}", word)


def word_pieces_hint(word: str, got: list[str], expected: list[str]) -> Hint:
    """What is wrong with ``got`` for ``word``, in the words of the likely mistake."""
    if "".join(got) != word:
        return (f"for {word!r} your pieces {got} join to {''.join(got)!r}, not to the word",
                f"对 {word!r}，你的片段 {got} 拼起来是 {''.join(got)!r}，不是原来的词")
    if not word.isascii():
        return (f"for {word!r} you returned {got}, expected {expected}. Your answer was right "
                "on the words of plain A-Z and a-z so far: letters outside them have case too "
                "('É'.isupper() and 'ß'.islower() are True)",
                f"对 {word!r}，你返回的是 {got}，应该是 {expected}。到目前为止，只由 A-Z 和 a-z "
                "组成的词你都答对了：可这两组以外的字母也分大小写（'É'.isupper() 和 "
                "'ß'.islower() 都是 True）")
    if got == [word]:
        return (f"for {word!r} you returned the whole word, as cl100k_base's pattern would; "
                f"o200k_base cuts where a lower-case letter meets a capital: {expected}",
                f"对 {word!r}，你返回了整个词，这是 cl100k_base 的正则模式的做法；o200k_base "
                f"会在小写字母后面接大写字母的地方切开：{expected}")
    if got == capital_runs_split(word) and len(got) > len(expected):
        return (f"for {word!r} you returned {got}, but a run of capitals stays together with "
                f"the lower-case letters after it: {expected} (HTTPServer is one pretoken; the "
                "ids HTTP + Server come from merges)",
                f"对 {word!r}，你返回的是 {got}，但一串大写字母要和紧跟其后的小写字母连在一起："
                f"{expected}（HTTPServer 是一个预分词片段；最后得到 HTTP + Server 两个 id，"
                "那是合并规则的结果）")
    if any(left.isupper() and len(left) > 1 and right.islower()
           for left, right in zip(got, got[1:])):
        return (f"for {word!r} you returned {got}: lower-case letters after a run of capitals "
                f"stay with it (a word is capitals, then lower case): {expected}",
                f"对 {word!r}，你返回的是 {got}：跟在一串大写字母后面的小写字母要和它连在一起"
                f"（一个词是先大写、后小写）：{expected}")
    if any(piece.isupper() and len(piece) == 1 for piece in got) and len(got) > len(expected):
        return (f"for {word!r} you returned {got}: do not cut between capitals; a run of "
                f"capitals is one piece, or the start of one: {expected}",
                f"对 {word!r}，你返回的是 {got}：大写字母之间不要切开；一串大写字母是一个片段，"
                f"或者是一个片段的开头：{expected}")
    return (f"for {word!r} expected {expected}, got {got}",
            f"对 {word!r}，应该是 {expected}，得到的是 {got}")


def check_o200k_word_pieces(candidate: Callable[[str], Any]) -> bool:
    """Print Correct! or a hint about the mistake; True when ``candidate`` is right."""
    for word in word_cases():
        expected = regex.findall(O200K_PATTERN, word)
        got, error = attempt(candidate, word)
        if error:
            return not_yet(f"for {word!r} it raised {error}", zh=f"处理 {word!r} 时抛出了 {error}")
        if not isinstance(got, (list, tuple)) or not all(isinstance(p, str) for p in got):
            return not_yet(f"for {word!r} you returned {short(got)}; return a list of strings",
                           zh=f"对 {word!r}，你返回的是 {short(got)}；要返回字符串列表")
        if list(got) != expected:
            return say(word_pieces_hint(word, list(got), expected))
    return correct()


# decode_pieces ---------------------------------------------------------------------------


@lru_cache(maxsize=1)
def checker_sentencepiece() -> Any:
    """A small SentencePiece BPE model with byte fallback, trained on two course texts."""
    import sentencepiece as spm

    lines = (course_text("harbour_bakery.txt")
             + course_text("one_sentence_many_languages.txt")).splitlines()
    spm.set_random_generator_seed(0)
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter([line for line in lines if line.strip()]), model_writer=model,
        model_type="bpe", vocab_size=600, byte_fallback=True, character_coverage=0.9995,
        normalization_rule_name="identity", remove_extra_whitespaces=False, num_threads=1,
        minloglevel=2)
    return spm.SentencePieceProcessor(model_proto=model.getvalue())


def decode_cases(seed: int = 0, count: int = 60) -> list[str]:
    """Texts with leading, doubled and trailing spaces, rare and unseen characters."""
    rng = random.Random(seed)
    alphabet = list("abcdefghij bread loaf  ") + ["é", "茶", "我", "ह", "🙂", "차", "\t", "ß"]
    texts = ["Hello world", " leading", "two  spaces ", "tea 🙂", "我奶奶", "a", "", "🙂x"]
    return texts + ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 20)))
                    for _ in range(count)]


def piece_lists(processor: Any) -> list[list[str]]:
    """The pieces of each case, then pieces from the middle of a text (a piece without
    ``▁`` or a byte piece first), which ``decode`` spells with no space to drop."""
    whole = [processor.encode(text, out_type=str) for text in decode_cases()]
    tails = [["ell", "o", "▁w", "or", "ld"], ["<0xF0>", "<0x9F>", "<0x99>", "<0x82>", "x"]]
    tails += [pieces[1:] for pieces in whole if len(pieces) > 1 and not pieces[1].startswith("▁")]
    return whole + tails


def decode_pieces_hint(pieces: list[str], got: str, expected: str) -> Hint:
    """What is wrong with ``got`` for ``pieces``, in the words of the likely mistake."""
    said = f"for pieces {pieces} you returned {got!r}"
    zh = f"对片段 {pieces}，你返回的是 {got!r}"
    if "<0x" in got:
        return (f"{said}: a piece like '<0xE6>' stands for the byte 0xE6, not for its name",
                f"{zh}：像 '<0xE6>' 这样的片段代表字节 0xE6，不是这几个字符本身")
    if "▁" in got:
        return f"{said}: '▁' stands for a space", f"{zh}：'▁' 代表一个空格"
    if got == " " + expected:
        return (f"{said}: drop the space the dummy prefix added at the start (expected "
                f"{expected!r})",
                f"{zh}：开头那个空格是虚拟前缀加上的，要去掉（应该是 {expected!r}）")
    if got == expected[1:] and not pieces[0].startswith("▁"):
        return (f"{said}, expected {expected!r}: the first piece does not start with '▁', so "
                "there is no dummy-prefix space to drop; drop the first character only when it "
                "is the space a leading '▁' gave",
                f"{zh}，应该是 {expected!r}：第一个片段不是以 '▁' 开头的，所以没有虚拟前缀的"
                "空格可去；只有当第一个字符是开头的 '▁' 变来的空格时，才把它去掉")
    if got == expected.lstrip(" ") and expected.startswith(" "):
        return (f"{said}, expected {expected!r}: drop only the one space of the dummy prefix, "
                "not every leading space",
                f"{zh}，应该是 {expected!r}：只去掉虚拟前缀加的那一个空格，不要把开头的空格"
                "全去掉")
    if got.replace(" ", "") == expected.replace(" ", ""):
        return (f"{said}, expected {expected!r}: each '▁' is one space",
                f"{zh}，应该是 {expected!r}：每个 '▁' 都是一个空格")
    return (f"{said}, expected {expected!r}. Byte pieces must be joined as bytes, then decoded "
            "as UTF-8 together.",
            f"{zh}，应该是 {expected!r}。字节片段要先按字节拼起来，再一起按 UTF-8 解码。")


def check_decode_pieces(candidate: Callable[[list[str]], Any]) -> bool:
    """Print Correct! or a hint about the mistake; True when ``candidate`` is right."""
    processor = checker_sentencepiece()
    for pieces in piece_lists(processor):
        expected = processor.decode_pieces(pieces)
        got, error = attempt(candidate, list(pieces))
        if error:
            hint = f"for pieces {pieces} it raised {error}"
            zh = f"处理片段 {pieces} 时抛出了 {error}"
            if error.startswith("UnicodeDecodeError"):
                hint += (". Collect the bytes of all pieces first and decode them together: "
                         "one byte piece alone is often not a whole character.")
                zh += "。先把所有片段的字节收集起来再一起解码：单独一个字节片段往往不是完整的字符。"
            return not_yet(hint, zh=zh)
        if not isinstance(got, str):
            return not_yet(f"for pieces {pieces} you returned {short(got)}; return a str",
                           zh=f"对片段 {pieces}，你返回的是 {short(got)}；要返回 str")
        if got != expected:
            return say(decode_pieces_hint(pieces, got, expected))
    return correct()
