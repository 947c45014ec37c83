"""A webhook receiver for tests/prometheus/run.sh, on 127.0.0.1 at a free port.

Answers by path: /ok 200, /fail 500 (retryable: the delivery is dead-lettered
"exhausted" once the schedule runs out), /refuse 400 (dead-lettered
"permanent_failure" at once). Writes its port to the file named by argv[1].
"""
import http.server
import os
import sys

STATUS = {"/ok": 200, "/fail": 500, "/refuse": 400}


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.send_response(STATUS.get(self.path, 404))
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # Written whole, then renamed: the script never reads half a port.
    tmp = sys.argv[1] + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, sys.argv[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
