"""The benchmarks still run: each one's ``--quick`` mode, in this process.

Speed goals are not tested (a busy machine would fail them for no reason). The gates are:
a benchmark whose encoder or trainer gives a wrong answer must stop with status 1.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# bench/ sits beside bpe_course/ but is not installed; make it importable from any cwd.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common  # noqa: E402
from bench import encode as bench_encode  # noqa: E402
from bench import train as bench_train  # noqa: E402

pytest.importorskip("tokenizers")


@pytest.mark.parametrize("mode", [["--runs", "2"], ["--shapes"], ["--scale"]])
def test_train_benchmark_quick(mode: list[str], tmp_path: Path, capsys) -> None:
    args = ["--quick", "--repeat", "1", "--cache-dir", str(tmp_path), *mode]
    status = bench_train.main(args)
    out = capsys.readouterr().out
    assert status == 0, out
    assert "PASS  train_bpe == train_bpe_naive" in out and "FAIL" not in out
    cpu_column = "| CPU time: ours / " if "--scale" in mode else "| CPU/wall |"
    assert cpu_column in out and "load average at end" in out


def test_scale_rows_put_rustbpe_beside_hf_with_its_merges_as_a_gate(tmp_path, capsys) -> None:
    pytest.importorskip("rustbpe", reason="rustbpe is a peer of the benchmark only")
    args = ["--scale", "--quick", "--size-mb", "0.5", "--vocab-size", "400", "--cache-dir"]
    status = bench_train.main([*args, str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "PASS  merges == rustbpe's: installed-0.5MB.txt: " in out
    assert "| time: ours / rustbpe / HF | CPU time: ours / rustbpe / HF |" in out


def test_rustbpe_gets_the_text_between_special_tokens_across_blocks(tmp_path) -> None:
    text = "one<|endoftext|>two<|endoftext|><|endoftext|>three <|x|> four<|x|>"
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    specials = ["<|endoftext|>", "<|x|>"]
    for block in (1, 2, 5, 100):  # a token cut by every possible block edge
        pieces = list(bench_train.documents(str(path), specials, block))
        assert pieces == ["one", "two", "", "three ", " four", ""], block
    assert list(bench_train.documents(str(path), [])) == [text]


def test_tree_memory_counts_the_children(tmp_path) -> None:
    import subprocess
    import time

    before = bench_train.tree_memory(os.getpid())
    assert before > 1_000_000  # this interpreter, at least
    ready = tmp_path / "ready"
    child = subprocess.Popen([sys.executable, "-c", (
        "import pathlib, sys, time; data = b'x' * 80_000_000; "
        "pathlib.Path(sys.argv[1]).touch(); time.sleep(30)"), str(ready)])
    try:
        deadline = time.monotonic() + 30
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert bench_train.tree_memory(os.getpid()) - before > 70_000_000
    finally:
        child.kill()
        child.wait()


def test_pathological_train_benchmark_quick(capsys) -> None:
    # rustbpe is a peer of the benchmark only; without it the rows say so.
    status = bench_train.main(["--pathological", "--quick"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "PASS  train_bpe == train_bpe_naive" in out and "FAIL" not in out
    assert "| one letter | 300 kB | 300 |" in out and "| random digits |" in out


@pytest.mark.parametrize("mode", [[], ["--adversarial"]])
def test_encode_benchmark_quick(mode: list[str], capsys) -> None:
    status = bench_encode.main(["--quick", "--repeat", "1", *mode])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "PASS  gpt2" in out and "FAIL" not in out
    assert ("| spaces | gpt2 |" if mode else "| 1.0 MB |") in out


def test_scale_corpus_is_built_once_and_reused(tmp_path: Path, capsys) -> None:
    args = ["--scale", "--quick", "--size-mb", "0.5", "--vocab-size", "300", "--cache-dir"]
    assert bench_train.main([*args, str(tmp_path)]) == 0
    assert bench_train.main([*args, str(tmp_path)]) == 0
    assert capsys.readouterr().out.count("building") == 1
    corpus = tmp_path / "installed-0.5MB.txt"
    assert 0 < corpus.stat().st_size <= 500_000
    assert "<|endoftext|>" in corpus.read_text(encoding="utf-8")


def test_a_wrong_encoder_stops_the_benchmark(monkeypatch, capsys) -> None:
    """Gates before timing: an encoder one id off must give FAIL and status 1, not a table."""
    real_cold = bench_encode.cold

    def off_by_one(tokenizer):
        broken = real_cold(tokenizer)
        encode = broken.encode
        broken.encode = lambda text, **kw: [*encode(text, **kw)[:-1], 0]
        return broken

    monkeypatch.setattr(bench_encode, "cold", off_by_one)
    assert bench_encode.main(["--quick", "--repeat", "1"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  gpt2 ids == tiktoken's" in out and "| English prose |" not in out


def test_a_wrong_stream_stops_the_benchmark(monkeypatch, capsys) -> None:
    """Streamed ids are compared one by one without being stored; one wrong id still fails."""
    real_cold = bench_encode.cold

    def one_extra_id(tokenizer):
        broken = real_cold(tokenizer)
        stream = broken.encode_iterable
        broken.encode_iterable = lambda chunks: iter([*stream(chunks), 0])
        return broken

    monkeypatch.setattr(bench_encode, "cold", one_extra_id)
    assert bench_encode.main(["--quick", "--repeat", "1"]) == 1
    out = capsys.readouterr().out
    assert "PASS  gpt2 ids == tiktoken's" in out
    assert "FAIL  gpt2 encode_iterable ids == tiktoken's: they differ from item" in out
    assert "| new Python memory at peak |" not in out


def test_check_names_where_results_part(capsys) -> None:
    assert common.check("same", [1, 2, 3], [1, 2, 3], "here")
    assert not common.check("shorter", [1, 2], [1, 2, 3], "here")
    assert not common.check("other", [1, 9, 3], [1, 2, 3], "here")
    assert common.check("skipped", None, [], "no files")
    out = capsys.readouterr().out
    assert "PASS  same: identical (3 items), here" in out
    assert "FAIL  shorter: they differ from item 2 on" in out
    assert "FAIL  other: they differ from item 1 on" in out
    assert "SKIP  skipped: no files" in out


def test_markdown_table_escapes_pipes(capsys) -> None:
    common.table("t", ["a", "b"], [["<|endoftext|>", "1"]])
    assert "| <\\|endoftext\\|> | 1 |" in capsys.readouterr().out


def passed_quick(main, capsys) -> str:
    """What a benchmark's ``main`` printed in a ``--quick`` run that passed every gate."""
    status = main(["--quick", "--repeat", "1"])
    out = capsys.readouterr().out
    assert status == 0 and "FAIL" not in out, out
    return out


def test_encode_array_benchmark_quick(capsys) -> None:
    from bench import encode_array

    out = passed_quick(encode_array.main, capsys)
    assert "PASS  gpt2: encode_to_array == tiktoken + np.save" in out
    assert "| o200k_base | " in out and "load average at end" in out


def test_floor_benchmark_quick(capsys) -> None:
    from bench import floor

    out = passed_quick(floor.main, capsys)
    assert "PASS  gpt2 split and merges alone == tiktoken's" in out
    assert "| split | warm encode | merges | floor |" in out and "| English prose | gpt2 |" in out


def test_a_floor_timed_on_other_pretokens_stops_the_benchmark(monkeypatch, capsys) -> None:
    """The split timed alone must be the encoder's own: one pretoken lost fails the gate."""
    from bench import floor

    real = floor.pretokens
    monkeypatch.setattr(floor, "pretokens", lambda tokenizer, text: real(tokenizer, text)[:-1])
    assert floor.main(["--quick", "--repeat", "1"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  gpt2 split and merges alone == tiktoken's" in out and "| floor |" not in out
