"""The session store, fed by engine events: recordings, replay, breakpoint profiles, commands from outside."""
