"""How long a link the app's server answers: on a fresh connection, on a connection the browser reuses, and when the
request arrives in small pieces (as over a slow network), by bisection on the URL's length in bytes.

    .venv/bin/python bench/bench_links.py [--port 8599]

Starts `streamlit run app.py` on 127.0.0.1 (nothing else is contacted), asks for `/?question=...` of a given length,
and prints the longest URL that got an HTTP answer (not uvicorn's "Invalid HTTP request received.") in each case.
The README's link limit (ui/links.py MAX_URL_BYTES) must hold in all three; a link the app writes is far shorter.
Not handled here: what the app does with the link's values (ui/links.py, tests/test_reliability.py).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def request(n_bytes: int) -> bytes:
    path = "/?question=" + "a" * max(0, n_bytes - len("http://127.0.0.1:65535/?question="))
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n".encode()


def _answered(sock: socket.socket) -> bool:
    sock.settimeout(30)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return False
        data += chunk
    head = data.split(b"\r\n", 1)[0]
    return head.startswith(b"HTTP/1.1 ") and not head.startswith(b"HTTP/1.1 400")


def _drain(sock: socket.socket) -> None:
    """Read the rest of a response so the connection can carry the next request."""
    sock.settimeout(0.5)
    try:
        while sock.recv(65536):
            pass
    except (socket.timeout, OSError):
        pass


def fresh(port: int, n: int) -> bool:
    with socket.create_connection(("127.0.0.1", port)) as s:
        try:
            s.sendall(request(n))
        except OSError:
            return False
        return _answered(s)


def reused(port: int, n: int) -> bool:
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"GET /_stcore/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n")
        if not _answered(s):
            return False
        _drain(s)
        try:
            s.sendall(request(n))
        except OSError:
            return False
        return _answered(s)


def in_pieces(port: int, n: int, piece: int = 1400) -> bool:
    data = request(n)
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            for i in range(0, len(data), piece):
                s.sendall(data[i:i + piece])
                time.sleep(0.002)  # one network packet at a time
        except OSError:  # the server gave up on the request and closed the connection
            return False
        return _answered(s)


def longest(check, port: int, lo: int = 1_000, hi: int = 200_000) -> int:
    if not check(port, lo):
        return 0
    while hi - lo > 500:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if check(port, mid) else (lo, mid)
    return lo


def main() -> int:
    from ui.links import MAX_URL_BYTES

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=8599)
    args = p.parse_args()
    env = {**os.environ, "RAG_GENERATOR": "extractive"}
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(args.port),
                               "--server.address", "127.0.0.1", "--server.headless", "true"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{args.port}/_stcore/health", timeout=2)
                break
            except OSError:
                time.sleep(1)
        rows = [("fresh connection", longest(fresh, args.port)), ("reused connection", longest(reused, args.port)),
                ("arriving in 1,400-byte pieces", longest(in_pieces, args.port))]
    finally:
        server.terminate()
        server.wait(30)
    print(f"| connection | longest URL answered (bytes, +-500) | the README's limit {MAX_URL_BYTES:,} holds |")
    print("|---|---|---|")
    for name, n in rows:
        print(f"| {name} | {n:,} | {'yes' if n >= MAX_URL_BYTES else 'NO'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
