"""Remote relays: another machine's relay server, its sessions mirrored here as ``NAME/s1`` over its HTTP API."""
