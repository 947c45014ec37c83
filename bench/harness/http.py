"""Loopback HTTP for the harness: one request, one fresh connection (as curl makes)."""

import http.client
import time


def request(port: int, path: str, method="GET", body=None, headers=None, timeout=5):
    """(status, body bytes, seconds); status 0 when nothing answered in time."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    t0 = time.perf_counter()
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        data = response.read()
        return response.status, data, time.perf_counter() - t0
    except (OSError, http.client.HTTPException):
        return 0, b"", time.perf_counter() - t0
    finally:
        conn.close()


def get_text(port: int, path: str, timeout=5) -> str:
    """The body of a 2xx answer, "" otherwise."""
    status, data, _ = request(port, path, timeout=timeout)
    return data.decode(errors="replace") if 200 <= status < 300 else ""
