"""Benchmarks: ``bpe_course`` side by side with Hugging Face tokenizers, tiktoken and
puretiktoken, each a script run from the repository root (``python -m bench.train``,
``python -m bench.encode``) that checks answers before it times them and prints markdown tables
of ratios. The README's Performance section lists the commands and shows one run."""
