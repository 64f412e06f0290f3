"""Counting on a Dask cluster: the README's example, run as written, learns the merges of the
local pool (``dask[distributed]`` is an optional test dependency; without it this skips)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bpe_course.base import ENDOFTEXT
from bpe_course.course.data import english_prose, python_source
from bpe_course.train import train_bpe

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_dask_example() -> str:
    """The README's one Python block that starts a Dask cluster."""
    text = README.read_text(encoding="utf-8")
    blocks = [block.split("```")[0] for block in text.split("```python\n")[1:]]
    (example,) = [block for block in blocks if "LocalCluster" in block]
    return example


def test_the_readme_shows_one_dask_example_that_trains():
    example = readme_dask_example()
    assert "train_bpe(" in example and "executor=client.get_executor()" in example


def test_a_dask_cluster_learns_the_merges_of_the_local_pool(
    tmp_path, monkeypatch, small_chunks, pool_spy
):
    pytest.importorskip("distributed", reason="dask[distributed] is not installed")
    text = english_prose(300_000) + ENDOFTEXT + python_source(700_000)
    (tmp_path / "corpus.txt").write_text(text, encoding="utf-8", newline="")
    monkeypatch.chdir(tmp_path)  # the example trains on "corpus.txt"
    small_chunks(128 * 1024)  # the local pool: about eight chunks on two workers
    local = train_bpe("corpus.txt", 1_000, [ENDOFTEXT], num_processes=2)
    assert pool_spy == [2]
    namespace = {"__name__": "__main__"}
    exec(compile(readme_dask_example(), str(README), "exec"), namespace)
    assert pool_spy == [2]  # the cluster counted; no local pool was started
    assert (namespace["vocab"], namespace["merges"]) == local
    assert len(local[1]) == 1_000 - 256 - 1
