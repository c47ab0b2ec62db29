"""Ray tasks and an actor the Ray tests debug: each marks the line a session should stop on."""

import time

import ray


@ray.remote
def double(x):
    y = x * 2
    breakpoint()  # task stops here
    y += 1
    return y


@ray.remote
def fail(x):
    ratio = x / 2
    raise ValueError(f"bad ratio {ratio}")  # post-mortem stops here


@ray.remote
def triple(x):
    y = x * 3
    y += 1  # notebook breakpoint here
    return y


@ray.remote
def hang():
    breakpoint()  # killed here
    return 0


@ray.remote
def nap():
    time.sleep(600)  # killed here
    return 0


@ray.remote
class Counter:
    def __init__(self):
        self.total = 10

    def add(self, n):
        self.total += n
        breakpoint()  # actor stops here
        return self.total
