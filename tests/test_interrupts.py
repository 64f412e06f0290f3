"""Stop signals in-process: handled once, never printed as a traceback, deferred when asked."""

from __future__ import annotations

import gc
import os
import signal
import sys

import pytest

from bpe_course.safety.interrupts import Interrupted, stop_signals_deferred, stop_signals_raise

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX signals")


class RaisesWhenCollected:
    """Python drops an exception raised in ``__del__`` (as in a callback after fork) and
    prints it as "Exception ignored"; a signal handled at that moment is lost like that."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        signal.getsignal(signal.SIGTERM)  # a bytecode boundary: the handler runs in here


def test_a_signal_lost_in_a_callback_is_raised_at_the_end_and_not_printed(capfd):
    with pytest.raises(Interrupted) as caught, stop_signals_raise():
        RaisesWhenCollected()
        gc.collect()
    assert caught.value.exit_code == 143
    assert capfd.readouterr().err == ""  # was "Exception ignored in ... Traceback ..."


def test_a_deferred_signal_waits_for_the_block_to_end():
    steps = []
    with pytest.raises(Interrupted) as caught, stop_signals_raise():
        with stop_signals_deferred():
            os.kill(os.getpid(), signal.SIGHUP)
            steps.append("after the signal")  # still running: the signal waits
        steps.append("after the block")
    assert steps == ["after the signal"]
    assert caught.value.exit_code == 129
