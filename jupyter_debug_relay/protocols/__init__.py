"""Protocols: message framing and request/response matching above a transport."""
