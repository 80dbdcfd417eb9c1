"""Connects to servers the test runs: TCP and UDP on loopback, a Unix socket by path."""

import socket

PORT = 0  # set by the test: a TCP server on 127.0.0.1, and a UDP one on the same number
UNIX_PATH = ""  # set by the test: a listening Unix socket


def attempt(what, action):
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - every failure is a result here
        return f"blocked {what} ({type(exc).__name__})"
    return f"CONNECTED {what}"


def tcp():
    with socket.create_connection(("127.0.0.1", PORT), timeout=1) as conn:
        conn.sendall(b"hello from the sandbox")


def udp():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.sendto(b"hello from the sandbox", ("127.0.0.1", PORT))


def unix():
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        sock.connect(UNIX_PATH)
        sock.sendall(b"hello from the sandbox")


class Solution:
    def crop_context(self, *args, **kwargs):
        results = [attempt("tcp", tcp), attempt("udp", udp)]
        if UNIX_PATH:
            results.append(attempt("unix", unix))
        raise ConnectionError("; ".join(results))
