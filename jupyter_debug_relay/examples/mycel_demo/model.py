"""The Mycel demo's pipeline model: flows, their CEL rules and lookups, connectors, and the demo service's data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Rule:
    """One CEL transform rule: ``target`` gets the value of ``expression``."""

    target: str
    expression: str


@dataclass(frozen=True)
class Lookup:
    """An enrich or step stage: rows of ``table`` whose ``field`` equals the CEL ``key``."""

    name: str
    table: str
    field: str
    key: str


@dataclass(frozen=True)
class Flow:
    """A flow: where it reads from, where it writes to, and its stages in order."""

    name: str
    source: tuple[str, str]
    target: tuple[str, str]
    stages: tuple[str, ...]
    rules: tuple[Rule, ...] = ()
    validate: str | None = None
    enrich: Lookup | None = None
    step: Lookup | None = None

    def info(self) -> dict[str, Any]:
        """The flow as the FlowInfo of ``inspect.flows``."""
        return {
            "name": self.name,
            "from": {"connector": self.source[0], "operation": self.source[1]},
            "to": {"connector": self.target[0], "operation": self.target[1]},
            "hasSteps": self.step is not None,
            "stepCount": int(self.step is not None),
            "transform": {r.target: r.expression for r in self.rules} or None,
            "response": None,
            "validate": {"input": self.validate, "output": ""} if self.validate else None,
            "hasCache": False,
            "hasRetry": False,
        }


@dataclass(frozen=True)
class Connector:
    """A connector; ``manual`` queue connectors are pulled one message at a time by ``debug.consume``."""

    name: str
    type: str
    driver: str = ""
    source: str = ""
    manual: bool = False


DEMO_FLOWS: tuple[Flow, ...] = (
    Flow(
        "create_user",
        ("api", "POST /users"),
        ("postgres", "users"),
        ("sanitize", "validate_input", "enrich", "transform", "write"),
        rules=(
            Rule("email", "lower(trim(input.email))"),
            Rule("name", "input.name"),
            Rule("domain", 'split(lower(trim(input.email)), "@")[1]'),
            Rule("is_new", "enriched.existing_user == null"),
        ),
        validate="user",
        enrich=Lookup("existing_user", "users", "email", "lower(trim(input.email))"),
    ),
    Flow("get_users", ("api", "GET /users"), ("postgres", "users"), ("read",)),
    Flow(
        "process_order",
        ("orders_queue", "orders"),
        ("postgres", "orders"),
        ("sanitize", "validate_input", "step", "transform", "write"),
        rules=(
            Rule("orderId", "input.orderId"),
            Rule("total", "double(input.amount)"),
            Rule("email", "lower(input.customer)"),
            Rule("known_customer", "steps.customer.count > 0"),
            Rule("status", '"processing"'),
        ),
        validate="order",
        step=Lookup("customer", "users", "email", "lower(input.customer)"),
    ),
    Flow(
        "record_reading",
        ("sensors", "sensors/#"),
        ("postgres", "readings"),
        ("transform", "write"),
        rules=(
            Rule("sensor", "input.sensor"),
            Rule("celsius", "(double(input.fahrenheit) - 32.0) * 5.0 / 9.0"),
        ),
    ),
)
DEMO_CONNECTORS: tuple[Connector, ...] = (
    Connector("api", "rest", source="POST /users, GET /users"),
    Connector("postgres", "database", "postgres"),
    Connector("orders_queue", "rabbitmq", "amqp", "orders", manual=True),
    Connector("sensors", "mqtt", "paho", "sensors/#"),
)
DEMO_TYPES: dict[str, list[dict[str, Any]]] = {
    "user": [
        {"name": "email", "type": "string", "required": True},
        {"name": "name", "type": "string", "required": True},
        {"name": "age", "type": "number", "required": False},
    ],
    "order": [
        {"name": "orderId", "type": "string", "required": True},
        {"name": "amount", "type": "number", "required": True},
        {"name": "customer", "type": "string", "required": True},
    ],
}
DEMO_TRANSFORMS: dict[str, dict[str, str]] = {"normalize_email": {"email": "lower(trim(input.email))"}}
DEMO_QUEUED: dict[str, tuple[dict[str, Any], ...]] = {
    "orders_queue": (
        {"orderId": "ORD-1", "amount": 99.99, "customer": "Bob@Example.com"},
        {"orderId": "ORD-2", "amount": 15, "customer": "carol@example.com"},
        {"orderId": "ORD-3", "amount": 42.5, "customer": "bob@example.com"},
    )
}
FIELD_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "number": (int, float), "bool": (bool,)}
