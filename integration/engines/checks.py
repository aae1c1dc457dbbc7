"""The checks the engines' Python scripts share (PyIceberg's and Spark's
Iceberg phases): an assertion with a message, an equality that shows both
sides, and a value as it is compared and reported (dates as ISO strings).

A script imports it after putting this directory on its path:
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__)))).
"""

import datetime


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def expect_equal(got, want, what):
    if got != want:
        raise AssertionError(f"{what}:\n  got  {got!r}\n  want {want!r}")


def plain(v):
    """v as the scripts compare and report it: dates as ISO strings."""
    if isinstance(v, (datetime.date, datetime.datetime)):
        return v.isoformat()
    return v
