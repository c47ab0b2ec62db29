"""A program that passes every kind of breakpoint once: a condition, a hit count, a log point, a function, a caught
exception; then it crashes (``crash``) or ends with ``sys.exit(3)``. With ``async``: a task awaited by another."""

import asyncio
import sys


def add(a, b):  # function
    return a + b  # add


def count():
    total = 0
    for i in range(10):
        total += i  # condition
        print("pass", i)  # after
    return total


def hits():
    seen = 0
    for j in range(5):
        seen += j  # hits
    return seen


def logs():
    for k in range(3):
        sys.stdout.write(f"k is {k}\n")  # log


def caught():
    try:
        return {}["missing"]  # raise
    except KeyError:
        return "caught"


async def produce():
    return 6  # produced


async def report():
    made = await asyncio.create_task(produce())
    return made * 7  # resumed


def main(mode):
    if mode == "async":
        print("reported", asyncio.run(report()))
        return
    count()
    hits()
    logs()
    add(1, 2)
    caught()
    if mode == "crash":
        raise ValueError("boom")  # crash
    sys.exit(3)  # exit


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "exit")
