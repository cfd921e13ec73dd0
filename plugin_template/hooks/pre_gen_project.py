"""Refuse plugin names that cannot become a package: before anything is written."""

import re
import sys

NAME = "{{ cookiecutter.plugin_name }}"
HYPHENATED = "{{ cookiecutter.__hyphenated }}"

if not re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", HYPHENATED):
    print(
        f"ERROR: plugin name {NAME!r} gives the package name {HYPHENATED!r}; use letters, digits, "
        "spaces, '-' or '_', starting with a letter (e.g. 'word count').",
        file=sys.stderr,
    )
    sys.exit(1)
