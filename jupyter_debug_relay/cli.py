"""The ``jupyter-debug-relay`` command (also ``jupyter debug-relay``): demo, install-kernel, version."""

from __future__ import annotations

import argparse
import sys

from . import __version__
from .errors import RelayError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="jupyter-debug-relay", description=__doc__)
    verbs = parser.add_subparsers(dest="verb", required=True)
    verbs.add_parser("demo", help="debug the bundled example in a kernel and print the cells with their results")
    install = verbs.add_parser("install-kernel", help='install the "Python 3 (debug relay)" kernel spec')
    where = install.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="for the current user")
    where.add_argument("--sys-prefix", action="store_true", help="in this environment (the default)")
    where.add_argument("--prefix", help="under this prefix, e.g. /usr/local")
    verbs.add_parser("version", help="print the version")
    options = parser.parse_args(argv)
    if options.verb == "version":
        print(__version__)
        return 0
    if options.verb == "install-kernel":
        from .kernel import kernelspec

        path = kernelspec.install(user=options.user, prefix=options.prefix)
        print(f"installed kernel spec {kernelspec.KERNEL_NAME} in {path}")
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
