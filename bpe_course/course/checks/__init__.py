"""The exercises' checkers, kept where a learner does not read them by accident.

Each notebook's exercise cell is followed by one visible line, for example
``check_exercise(pick_pair, solution_pick_pair, check_pick_pair)``. The checker behind that
line runs the learner's answer on traps and real text and prints ``Correct!`` or a hint
that names the actual mistake. The checkers are the course's answers in disguise, so they
live here, one module per notebook, and :mod:`.harness` holds what every notebook shares.

- :mod:`.wild`: notebook 07, o200k_base's rule for words and SentencePiece pieces decoded
- :mod:`.open_models`: notebook 08, a loader for Qwen 2.5 checked against Qwen's library
- :mod:`.tokens_for_models`: notebook 09, a vocabulary's parameters, a token file's dtype, and
  a chat prompt no message can forge
"""
