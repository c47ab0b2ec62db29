"""A module of the 3.11 lazy-tracing tests' target programs: breakpoints go on its marked lines."""

import sys


def traced():
    return sys.gettrace() is not None


def target(x):
    y = x + 1  # target
    return y


def loop(n):
    total = 0
    for i in range(n):
        total += i  # each
    return total


def tick(n):
    return n + 1  # tick
