"""A loopback HTTP server for the dataset tests, with faults injected on demand.

``FileServer(files)`` serves ``files`` (name -> bytes or a Path) at ``server.url + name`` and
honours ``Range: bytes=N-``. ``server.faults[name]`` is a list of faults consumed one per
request: ``"500"`` (answer HTTP 500), ``"truncate"`` (announce the full length, send half,
close), ``"reset"`` (send half, then reset the connection), ``"stall"`` (send half, then
sleep ``stall_s``), ``"slow"`` (send the whole file slowly, for concurrency tests),
``"trickle"`` (send one byte every ``trickle_s`` until the client gives up).
``server.requests`` records ``(name, range header)`` of every request.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class FileServer:
    def __init__(self, files: dict[str, bytes | Path], stall_s: float = 2.0, trickle_s: float = 0.05):
        self.files = dict(files)
        self.faults: dict[str, list[str]] = {}
        self.requests: list[tuple[str, str | None]] = []
        self.stall_s = stall_s
        self.trickle_s = trickle_s
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output quiet
                pass

            def do_GET(self):
                name = self.path.lstrip("/")
                rng = self.headers.get("Range")
                owner.requests.append((name, rng))
                fault = owner.faults.get(name, []).pop(0) if owner.faults.get(name) else None
                if name not in owner.files:
                    self.send_error(404)
                    return
                if fault == "500":
                    self.send_response(500)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = owner.files[name]
                body = body.read_bytes() if isinstance(body, Path) else body
                start = int(rng.split("=")[1].split("-")[0]) if rng else 0
                self.send_response(206 if rng else 200)
                if rng:
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                self.send_header("Content-Length", str(len(body) - start))
                self.send_header("Accept-Ranges", "bytes")
                self.end_headers()
                body = body[start:]
                half = len(body) // 2
                if fault in ("truncate", "reset", "stall"):
                    self.wfile.write(body[:half])
                    self.wfile.flush()
                    if fault == "stall":
                        time.sleep(owner.stall_s)
                    if fault == "reset":
                        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                    return
                if fault == "trickle":
                    try:
                        for k in range(len(body)):
                            self.wfile.write(body[k:k + 1])
                            self.wfile.flush()
                            time.sleep(owner.trickle_s)
                    except OSError:  # the client gave up
                        pass
                    self.close_connection = True
                    return
                if fault == "slow":
                    for k in range(0, len(body), max(1, len(body) // 10)):
                        self.wfile.write(body[k:k + max(1, len(body) // 10)])
                        self.wfile.flush()
                        time.sleep(0.05)
                    return
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def gets(self, name: str) -> list[str | None]:
        """The Range header of each request for ``name`` (None = whole file)."""
        return [r for n, r in self.requests if n == name]

    def __enter__(self) -> FileServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def closed_port() -> int:
    """A loopback port with nothing listening."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
