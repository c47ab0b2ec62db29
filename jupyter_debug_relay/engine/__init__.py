"""The engine: sessions, breakpoints, output and events on the relay loop."""
