"""The relay server for agents: an HTTP API (with OpenAPI and Server-Sent Events) and MCP, over one ``Relay``."""

from .app import RelayApp, ServerConfig, create_app
from .runner import RelayServer

__all__ = ["RelayApp", "RelayServer", "ServerConfig", "create_app"]
