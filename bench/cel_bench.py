"""How long the Mycel demo takes to evaluate one CEL rule: typical rules, 10,000 evaluations each.

``python bench/cel_bench.py [-n 10000] [--rounds 3]`` prints microseconds per evaluation (best round),
with each expression compiled once and cached (what the runtime does) and, for comparison, compiled
anew every time. Run against an older checkout (whose home-made interpreter had no cache), it
prints the one figure it can.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from jupyter_debug_relay.examples.mycel_demo import compile_cel, evaluate_cel

ACTIVATION = {
    "input": {"email": " Ann@Example.com ", "name": "Ann", "quantity": 4, "unit_price": 30.0},
    "output": {"customer": "ann@example.com", "subtotal": 120.0, "discount": 0.1},
    "enriched": {"existing_user": None},
    "ctx": {},
}
RULES = (
    'split(lower(trim(input.email)), "@")[1]',  # create_user's domain rule
    "output.subtotal >= 100.0 ? 0.1 : 0.0",  # the quote pipeline's discount rule
    'input.name == "Bob"',  # a breakpoint condition
)


def best_of(rounds: int, n: int, run: Callable[[], object]) -> float:
    """Microseconds per call, in the fastest of ``rounds`` rounds of ``n`` calls."""
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for _ in range(n):
            run()
        best = min(best, time.perf_counter() - started)
    return best / n * 1e6


def main() -> None:
    """Print one line per rule: cached and uncached microseconds per evaluation."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=10_000, help="evaluations per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    uncached_n = max(1, args.n // 10)
    print(f"{'rule':<45} {'cached us':>10} {'uncached us':>12}")
    for rule in RULES:
        cached = best_of(args.rounds, args.n, lambda rule=rule: evaluate_cel(rule, ACTIVATION))

        if not hasattr(compile_cel, "cache_clear"):
            print(f"{rule:<45} {'-':>10} {cached:>12.1f}")
            continue

        def uncached(rule: str = rule) -> object:
            compile_cel.cache_clear()
            return evaluate_cel(rule, ACTIVATION)

        print(f"{rule:<45} {cached:>10.1f} {best_of(args.rounds, uncached_n, uncached):>12.1f}")


if __name__ == "__main__":
    main()
