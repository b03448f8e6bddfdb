#!/usr/bin/env python3
"""HTTP server for the concurrent tool call tests (test_parallel.c).

Listens on 127.0.0.1 with an ephemeral port, prints the port on stdout and
serves until stdin closes.  Every request to /wait/<n>/<tag> or
/hold/<ms>/<tag> counts as open until it is answered; the peak of open
requests is kept.

  GET /wait/<n>/<tag>  waits until <n> requests are open at once (or were,
                       since this group started), then answers "page <tag>";
                       after 20 s without that it answers "TIMEOUT <tag>"
                       (the test then fails instead of hanging).
  GET /hold/<ms>/<tag> holds the request <ms> milliseconds, then "page <tag>".
  GET /peak            answers the peak and resets it (and the wait groups).

Python standard library only.
"""
import http.server
import os
import socketserver
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_server as fs  # noqa: E402

COND = threading.Condition()
STATE = {"open": 0, "peak": 0}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, text):
        body = text.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        parts = self.path.strip("/").split("/")
        if parts == ["peak"]:
            with COND:
                peak = STATE["peak"]
                STATE["peak"] = 0
            self.answer(str(peak))
            return
        if len(parts) != 3 or parts[0] not in ("wait", "hold"):
            self.send_error(404)
            return
        kind, num, tag = parts[0], int(parts[1]), parts[2]
        with COND:
            STATE["open"] += 1
            STATE["peak"] = max(STATE["peak"], STATE["open"])
            COND.notify_all()
        reached = True
        if kind == "wait":
            with COND:
                reached = COND.wait_for(lambda: STATE["peak"] >= num, timeout=20)
        else:
            time.sleep(num / 1000.0)
        with COND:
            STATE["open"] -= 1
        self.answer(("page " if reached else "TIMEOUT ") + tag)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def main():
    fs.serve(Handler, Server)


if __name__ == "__main__":
    main()
