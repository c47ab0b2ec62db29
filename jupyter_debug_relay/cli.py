"""The ``jupyter-debug-relay`` command (also ``jupyter debug-relay``)."""

from __future__ import annotations

import argparse
import sys

from . import __version__
from .errors import RelayError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="jupyter-debug-relay", description=__doc__)
    verbs = parser.add_subparsers(dest="verb", required=True)
    verbs.add_parser("demo", help="debug the bundled example and print the transcript")
    verbs.add_parser("version", help="print the version")
    options = parser.parse_args(argv)
    if options.verb == "version":
        print(__version__)
        return 0
    from . import demo

    try:
        code = demo.run()
    except RelayError as exc:
        print(f"error: {exc.code}: {exc.message}\nhint: {exc.hint}", file=sys.stderr)
        return 2
    print(f"demo finished (the example exits with {code} because of its bug)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
