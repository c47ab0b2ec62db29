"""The events front ends receive (``Event``, which kinds are never dropped, a bounded queue of them and the
``dropped`` event that accounts for what it lets go), without importing the engine."""

from ..engine.events import STATE_EVENTS, Event, EventQueue, dropped_event

__all__ = ["STATE_EVENTS", "Event", "EventQueue", "dropped_event"]
