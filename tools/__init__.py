"""Maintenance tools for the course: building the slide decks and checking that they fit.

They are not part of the ``bpe_course`` package a learner imports; run them with
``python -m tools.NAME`` from the project folder (the Makefile does).
"""
