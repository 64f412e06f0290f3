"""The benchmarks still run: each one's smallest mode, in this process.

Speed goals are not tested here (a busy machine would fail them for no reason); the
correctness checks inside the benchmarks are, since a failed check makes ``main`` return 1.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# bench/ sits beside bpe_course/ but is not installed; make it importable from any cwd.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import encode as bench_encode  # noqa: E402
from bench import train as bench_train  # noqa: E402


def test_train_benchmark_quick(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tokenizers")
    status = bench_train.main(["--quick", "--sizes", "0.3,0.6", "--vocab", "600", "--repeat", "1"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "PASS  train_bpe == train_bpe_naive" in out
    assert "stdlib 0.6 MB" in out
    assert "FAIL  memory" in out or "PASS  memory" in out


def test_encode_benchmark_quick(capsys: pytest.CaptureFixture[str]) -> None:
    status = bench_encode.main(
        ["--quick", "--code-mb", "0.2", "--stream-sizes", "0.2,0.6", "--repeat", "1"]
    )
    out = capsys.readouterr().out
    assert status == 0, out
    assert "PASS  ids identical to tiktoken" in out
    assert "PASS  encode_iterable == encode" in out
