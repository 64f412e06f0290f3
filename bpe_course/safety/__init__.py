"""Safe with what users have and what they send: signals, files, special tokens in text.

- :mod:`.quoting`: what a file or a user sent, quoted in a message at a bounded length
- :mod:`.interrupts`: Ctrl-C and ``kill`` during long work, in the main process and workers
- :mod:`.files`: files and folders written to a temporary name and swapped into place
- :mod:`.staging`: the hidden folder a tokenizer is built in, and tidying those of killed runs
- :mod:`.reading`: files read whole only if they are regular files of a sane size; packaged
  files checked against their sha256
- :mod:`.proven`: the split patterns the package vouches for (its own, the open models')
- :mod:`.patterns`: split patterns refused if they could lose text, stopped if they hang
- :mod:`.specials`: special tokens in text from users: which become ids, which are refused
"""
