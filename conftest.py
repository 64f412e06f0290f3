"""Every pytest run (unit tests, doctests, notebooks) keeps its start-up cache in a folder of
its own, removed at the end: tests never write into the real cache in the user's home."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

from bpe_course.speed.startcache import CACHE_ENV

_FOLDER = tempfile.mkdtemp(prefix="bpe_course_test_cache_")
os.environ[CACHE_ENV] = _FOLDER  # worker processes and notebook kernels inherit it
atexit.register(shutil.rmtree, _FOLDER, True)
