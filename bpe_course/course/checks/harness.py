"""What every exercise check shares: call the learner's answer safely, print the verdict.

A check must never stop *Run All*: an answer that raises, returns ``None`` or returns the
wrong type is a wrong answer with a hint, not a traceback. An answer still left as the stub
(``...`` or ``raise NotImplementedError``) is "not written yet"; the reference solution is
then checked quietly, so the cell neither claims the learner solved it nor hides a broken
solution from the course's own tests.

>>> def double(x):
...     return 2 * x
>>> def check_double(candidate):
...     got, error = attempt(candidate, 21)
...     return correct() if got == 42 else not_yet(
...         error or f"double(21) gave {got!r}", zh=error or f"double(21) 得到的是 {got!r}")
>>> check_exercise(double, double, check_double) is double
Correct!
True
>>> def stub(x):
...     raise NotImplementedError
>>> check_exercise(stub, double, check_double) is double
`stub` is not written yet: write it above, then run this cell again.
(Until then, later cells use the reference solution.)
True
>>> def crashes_the_checker(x):
...     return None
>>> def fragile_check(candidate):
...     return candidate(1) + 1 == 3
>>> check_exercise(crashes_the_checker, double, fragile_check) is double  # doctest: +ELLIPSIS
Not yet: checking your answer raised TypeError: ... (did a `return` go missing?)
(Until yours passes, later cells use `double`.)
True

The Chinese edition's notebooks call ``use_language("zh-CN")`` first, and the harness speaks
Chinese. A checker's own hint follows when it gives a Chinese one (``not_yet(..., zh=...)``);
a hint written only in English stays English, after the Chinese words around it:

>>> use_language("zh-CN")
>>> def off_by_one(x):
...     return x + 1
>>> check_exercise(off_by_one, double, check_double) is double
还差一点：double(21) 得到的是 22
（在你的答案通过之前，后面的单元格用 `double`。）
True
>>> check_exercise(double, double, check_double) is double
正确！
True
>>> check_exercise(stub, double, check_double) is double
`stub` 还没有写：先在上面写好它，再运行这个单元格。
（在那之前，后面的单元格用参考答案。）
True
>>> not_yet("the pair ('a', 'b') should come first")
还差一点：the pair ('a', 'b') should come first
False
>>> use_language("en")
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable
from typing import Any

#: Every line the harness prints itself, per language. A language a learner may choose has
#: all the keys of ``"en"`` (tests/test_grade.py and the doctests hold them to it).
MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        "correct": "Correct!",
        "not_yet": "Not yet: ",
        "not_written": "not written yet",
        "stub": "{what} not written yet: write it above, then run this cell again.",
        "named": "`{name}` is",
        "unnamed": "Your answer is",
        "until_then": "(Until then, later cells use the reference solution.)",
        "until_yours": "(Until yours passes, later cells use `{name}`.)",
        "raised": "checking your answer raised {why}",
        "no_return": " (did a `return` go missing?)",
    },
    "zh-CN": {
        "correct": "正确！",
        "not_yet": "还差一点：",
        "not_written": "还没有写",
        "stub": "{what} 还没有写：先在上面写好它，再运行这个单元格。",
        "named": "`{name}`",
        "unnamed": "你的答案",
        "until_then": "（在那之前，后面的单元格用参考答案。）",
        "until_yours": "（在你的答案通过之前，后面的单元格用 `{name}`。）",
        "raised": "检查你的答案时抛出了 {why}",
        "no_return": "（是不是漏了 `return`？）",
    },
}

#: Where a notebook's language comes from when it never calls :func:`use_language`.
LANGUAGE_VARIABLE = "BPE_COURSE_LANGUAGE"

_chosen: str | None = None


def use_language(language: str) -> None:
    """Print the harness's own words in ``language`` (``"en"`` or ``"zh-CN"``) from now on.

    >>> use_language("fr")
    Traceback (most recent call last):
    ...
    ValueError: use_language('fr'): the checks speak 'en' or 'zh-CN'
    """
    global _chosen
    if language not in MESSAGES:
        known = " or ".join(repr(name) for name in MESSAGES)
        raise ValueError(f"use_language({language!r}): the checks speak {known}")
    _chosen = language


def language() -> str:
    """The language chosen by :func:`use_language`, else ``$BPE_COURSE_LANGUAGE``, else English
    (an unknown value in the variable is ignored: a check must never stop *Run All*)."""
    chosen = _chosen or os.environ.get(LANGUAGE_VARIABLE, "en")
    return chosen if chosen in MESSAGES else "en"


def message(key: str, **fields: str) -> str:
    """The harness's line ``key`` in the current language, with ``fields`` filled in."""
    return MESSAGES[language()][key].format(**fields)


def words(key: str) -> tuple[str, ...]:
    """Line ``key`` in every language: what :mod:`tools.grade` looks for in a check's output.

    >>> words("correct")
    ('Correct!', '正确！')
    """
    return tuple(table[key] for table in MESSAGES.values())


#: The words :mod:`tools.grade` looks for in what a check cell printed (English; see
#: :func:`words` for every language).
CORRECT = MESSAGES["en"]["correct"]
NOT_WRITTEN = MESSAGES["en"]["not_written"]


def short(value: Any, limit: int = 160) -> str:
    """``repr(value)``, cut to ``limit`` characters, so a hint fits on a line.

    >>> short("x" * 300, 10)
    "'xxxxxxxxx..."
    """
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def correct() -> bool:
    """Print the verdict for an answer that passed every case."""
    print(message("correct"))
    return True


def not_yet(hint: str, *, zh: str | None = None) -> bool:
    """Print a hint that names the mistake, and fail.

    ``hint`` is the English hint; ``zh``, when a checker has one, is said in the Chinese
    edition instead (without it the Chinese edition shows the English hint).
    """
    said = zh if zh is not None and language() == "zh-CN" else hint
    print(message("not_yet") + said)
    return False


#: A hint in both editions, ``(English, Chinese)``: what a checker's helper returns when it
#: names a mistake, so that the English and the Chinese words are written side by side.
Hint = tuple[str, str]


def say(hint: Hint) -> bool:
    """:func:`not_yet` for a hint given as an ``(English, Chinese)`` pair.

    >>> say(("tokens are bytes", "词元是字节"))
    Not yet: tokens are bytes
    False
    """
    return not_yet(hint[0], zh=hint[1])


def attempt(function: Callable[..., Any], *args: Any) -> tuple[Any, str | None]:
    """Call the learner's function: ``(result, None)``, or ``(None, "TypeError: ...")``.

    ``NotImplementedError`` goes through: it means "not written yet", not "wrong".
    """
    try:
        return function(*args), None
    except NotImplementedError:
        raise
    except Exception as error:  # a crash is a wrong answer; the hint shows it
        return None, f"{type(error).__name__}: {error}"


def _is_stub(answers: tuple[Any, ...]) -> bool:
    return any(answer is ... for answer in answers)


def _quietly(checker: Callable[..., bool], answers: tuple[Any, ...]) -> None:
    """Run the reference solution through its checker without printing; a failure is the
    course's bug, so it raises instead of passing as the learner's."""
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        passed = checker(*answers)
    if not passed:
        raise AssertionError("the reference solution fails its own check:\n" + printed.getvalue())


def check_exercise(mine: Any, solution: Any, checker: Callable[..., bool]) -> Any:
    """Check the learner's answer once written; return whichever answer later cells should use.

    ``mine`` and ``solution`` are one answer or a tuple of answers (an exercise with several
    parts). The learner's answer is returned only if it passed.
    """
    mine_args = mine if isinstance(mine, tuple) else (mine,)
    solution_args = solution if isinstance(solution, tuple) else (solution,)
    try:
        if _is_stub(mine_args):
            raise NotImplementedError
        try:
            passed = checker(*mine_args)
        except NotImplementedError:
            raise
        except Exception as error:  # the checker tripped over the answer: still a hint
            why = f"{type(error).__name__}: {error}"
            hint = message("raised", why=why) + (message("no_return") if "NoneType" in why else "")
            passed = not_yet(hint, zh=hint)  # already in the chosen language
    except NotImplementedError:
        name = getattr(mine_args[0], "__name__", None)
        what = message("named", name=name) if name else message("unnamed")
        print(message("stub", what=what))
        print(message("until_then"))
        _quietly(checker, solution_args)
        return solution
    if passed:
        return mine
    name = getattr(solution_args[0], "__name__", None)
    if name:
        print(message("until_yours", name=name))
    return solution
