"""Any debug adapter over DAP: the client backend, its feature requests, message shapes, adapter registry."""
