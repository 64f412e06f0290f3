"""The ``bpe-course`` command line.

- :mod:`.terminal`: arguments, ids and output text, exact in any locale
- :mod:`.cli`: ``bpe-course train | encode | decode | show``
"""
