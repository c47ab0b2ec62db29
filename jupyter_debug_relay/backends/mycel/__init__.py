"""Mycel services over JSON-RPC 2.0 on a WebSocket: stage and CEL-rule breakpoints, the runtime's own verbs."""
