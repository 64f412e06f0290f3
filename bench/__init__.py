"""Benchmarks that put ``bpe_course`` side by side with the Rust tokenizers.

Run them from the repository root::

    .venv/bin/python -m bench.train     # training vs Hugging Face tokenizers
    .venv/bin/python -m bench.encode    # encoding vs tiktoken

Each prints a table of *ratios* measured in the same run, on the same machine, with the same
input, so the numbers mean something on any laptop. ``--quick`` gives a smoke run in
seconds; ``--profile`` shows where our time goes. These are not tests: a slow machine makes
the times slow, not wrong. Correctness checks run first, though, so a benchmark of a wrong
trainer or encoder stops with a FAIL instead of looking good.
"""
