"""Transports: byte streams to peers (subprocess stdio, TCP, WebSocket)."""
