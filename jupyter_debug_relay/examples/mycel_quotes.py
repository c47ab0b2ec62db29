"""A Mycel pipeline with a bug, served by the bundled demo runtime: price quotes with a bulk discount.

Its one flow, ``quote_order`` (REST ``POST /quotes`` into the ``quotes`` table), runs the stages
sanitize, validate_input, transform and write. The transform's CEL rules compute the customer, the
subtotal, the discount rate (10 % from 100 euros on) and the total; the total comes out wrong.

In a notebook::

    service = start()                       # serves on 127.0.0.1 in a background thread
    service.url                             # ws://127.0.0.1:PORT/debug, for connect mycel
    service.request("quote_order", {"customer": "ann@example.com", "quantity": 4, "unit_price": 30.0})
    service.stop()

``python -m jupyter_debug_relay.examples.mycel_quotes --port 0`` serves it until stopped; its URL is
the first line on stdout.
"""

from __future__ import annotations

from .mycel_demo import Connector, Flow, MycelRuntime, Rule, RuntimeThread, run_program

QUOTE_ORDER = Flow(
    "quote_order",
    ("api", "POST /quotes"),
    ("postgres", "quotes"),
    ("sanitize", "validate_input", "transform", "write"),
    rules=(
        Rule("customer", "lower(trim(input.customer))"),
        Rule("subtotal", "double(input.quantity) * double(input.unit_price)"),
        Rule("discount", "output.subtotal >= 100.0 ? 0.1 : 0.0"),
        Rule("total", "output.subtotal - output.discount"),
    ),
    validate="quote",
)
CONNECTORS = (
    Connector("api", "rest", source="POST /quotes"),
    Connector("postgres", "database", "postgres"),
)
TYPES = {
    "quote": [
        {"name": "customer", "type": "string", "required": True},
        {"name": "quantity", "type": "number", "required": True},
        {"name": "unit_price", "type": "number", "required": True},
    ],
}


def runtime(flow: Flow = QUOTE_ORDER) -> MycelRuntime:
    """A demo runtime serving ``flow`` (the quote pipeline by default) and nothing else."""
    return MycelRuntime(flows=(flow,), connectors=CONNECTORS, types=TYPES, transforms={}, queued={})


def start(flow: Flow = QUOTE_ORDER) -> RuntimeThread:
    """Serve ``flow`` on 127.0.0.1 from a background thread; stop it with ``.stop()``."""
    service = RuntimeThread(runtime(flow))
    service.start()
    return service


def main(argv: list[str] | None = None) -> None:
    """``python -m jupyter_debug_relay.examples.mycel_quotes --port 0``."""
    run_program(runtime, "python -m jupyter_debug_relay.examples.mycel_quotes", argv)


if __name__ == "__main__":
    main()
