"""Compiled modules are cached under __pycache__/ (gitignored) even where
PYTHONDONTWRITEBYTECODE is set, as it is in some sandboxes and CI images. Without the
cache every run compiled again every module it imported, and pytest rewrote the asserts of
every test module and plugin again: about half of each worker's collection, and seconds of
CPU in each Orion process a test starts (docs/testing.md).

A plugin named first in pyproject.toml's addopts (`-p`), so that it runs before pytest
imports (and rewrites) the installed plugins and the conftest files."""

import sys

sys.dont_write_bytecode = False
