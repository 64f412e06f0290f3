"""Safe with what users have and what they send: signals, files, special tokens in text.

- :mod:`.interrupts`: Ctrl-C and ``kill`` during long work, in the main process and workers
- :mod:`.files`: files and folders written to a temporary name and swapped into place
- :mod:`.staging`: the hidden folder a tokenizer is built in, and tidying those of killed runs
- :mod:`.specials`: special tokens in text from users: which become ids, which are refused
"""
