"""The exercises' checkers, kept where a learner does not read them by accident.

Each notebook's exercise cell is followed by one visible line, for example
``check_exercise(pick_pair, solution_pick_pair, check_pick_pair)``. The checker behind that
line runs the learner's answer on traps and real text and prints ``Correct!`` or a hint
that names the actual mistake (in the Chinese edition ``正确！`` or ``还差一点：...``, see
:func:`.harness.use_language`). The checkers are the course's answers in disguise, so they
live here, one module per notebook, and :mod:`.harness` holds what every notebook shares:
:mod:`.why_tokenization` (00), :mod:`.bytes_utf8` (01), :mod:`.naive_bpe` (02),
:mod:`.pretokenization` (03), :mod:`.fast_training` (04), :mod:`.openai_files` (05),
:mod:`.encoding_in_practice` (06), :mod:`.build_your_own` (06b, the tokenizer class),
:mod:`.wild` (07), :mod:`.open_models` (08) and :mod:`.tokens_for_models` (09).
"""
