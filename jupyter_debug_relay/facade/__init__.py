"""The synchronous facade: ``Relay``, the session handles and the events front ends see, from any thread."""
