"""Run the Mycel demo runtime: ``python -m jupyter_debug_relay.examples.mycel_demo --port 0``."""

from .cli import main

main()
