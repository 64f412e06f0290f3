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
...     return correct() if got == 42 else not_yet(error or f"double(21) gave {got!r}")
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
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from typing import Any

#: The words :mod:`tools.grade` looks for in what a check cell printed.
CORRECT = "Correct!"
NOT_WRITTEN = "not written yet"


def short(value: Any, limit: int = 160) -> str:
    """``repr(value)``, cut to ``limit`` characters, so a hint fits on a line.

    >>> short("x" * 300, 10)
    "'xxxxxxxxx..."
    """
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def correct() -> bool:
    """Print the verdict for an answer that passed every case."""
    print(CORRECT)
    return True


def not_yet(hint: str) -> bool:
    """Print a hint that names the mistake, and fail."""
    print("Not yet: " + hint)
    return False


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
            passed = not_yet(f"checking your answer raised {why}"
                             + (" (did a `return` go missing?)" if "NoneType" in why else ""))
    except NotImplementedError:
        name = getattr(mine_args[0], "__name__", None)
        what = f"`{name}` is" if name else "Your answer is"
        print(f"{what} {NOT_WRITTEN}: write it above, then run this cell again.")
        print("(Until then, later cells use the reference solution.)")
        _quietly(checker, solution_args)
        return solution
    if passed:
        return mine
    name = getattr(solution_args[0], "__name__", None)
    if name:
        print(f"(Until yours passes, later cells use `{name}`.)")
    return solution
