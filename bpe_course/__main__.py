"""Where ``bpe-course ...`` and ``python -m bpe_course ...`` start.

Python turns Ctrl-C into ``KeyboardInterrupt`` from its first instant, so a Ctrl-C while
the package is still loading (a fifth of a second) would end in Python's traceback through
our modules. This module imports nothing of the package before it has set its own Ctrl-C
handler, which ends the start-up with one line; the command line then sets its own
(:mod:`bpe_course.safety.interrupts`) once it has read its arguments. Nothing is written
before that.
"""

from __future__ import annotations

import os
import signal
import sys


def _interrupted_while_starting(signum: int, frame: object) -> None:
    sys.stderr.write("bpe-course: error: interrupted\n")  # as the command line says it
    sys.stderr.flush()
    os._exit(128 + signum)  # no clean-up is needed: nothing has been opened or written


def main() -> int:
    """Run the command line, with Ctrl-C covered from the first line of ours on."""
    signal.signal(signal.SIGINT, _interrupted_while_starting)
    from .app.cli import main as command_line

    return command_line()


if __name__ == "__main__":
    sys.exit(main())
