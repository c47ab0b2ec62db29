"""A small HTTP service that answers the average of the last ``WINDOW`` response times it was sent. It has a bug.

``GET /record?ms=N`` records a response time of N milliseconds and answers the moving average.
Run it with ``python latency_service.py [PORT]`` (0 picks a free port); its first line on stdout
says where it listens. It serves until it is stopped (SIGINT or SIGTERM).
"""

import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlparse

WINDOW = 3
samples = []


def record(ms):
    samples.append(ms)
    if len(samples) > WINDOW:
        samples.pop()
    return sum(samples) / len(samples)


class Handler(BaseHTTPRequestHandler):
    """Answers ``/record?ms=N`` with the moving average, as plain text."""

    def do_GET(self):
        query = parse_qs(urlparse(self.path).query)
        try:
            ms = float(query["ms"][0])
        except (KeyError, ValueError):
            self.send_error(400, "usage: /record?ms=N")
            return
        body = f"{record(ms):.1f}\n".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass  # one line per request would drown the service's own output


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8000
    server = HTTPServer(("127.0.0.1", port), Handler)
    print(f"serving on http://127.0.0.1:{server.server_port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
