"""Fails at import on line 5 (print-mode tests check the file:line in the error)."""


def helper():
    return {}["missing"]


VALUE = helper()
