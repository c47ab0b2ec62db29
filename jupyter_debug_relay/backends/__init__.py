"""Backends: each translates one kind of peer into the neutral model."""
