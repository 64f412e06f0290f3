"""What the notebooks use beside the tokenizer itself: corpora and pictures.

- :mod:`.data`: corpora that need no internet (the course's texts, Python's own docs and source)
- :mod:`.viz`: token boundaries in colour (HTML and terminal), and a few plots
"""
