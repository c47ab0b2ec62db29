"""The events front ends receive (``Event``, and which kinds are never dropped), without importing the engine."""

from .engine.events import STATE_EVENTS, Event

__all__ = ["STATE_EVENTS", "Event"]
