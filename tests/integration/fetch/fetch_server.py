#!/usr/bin/env python3
"""Local HTTP server for the FetchURL tests: listens on 127.0.0.1 with an
ephemeral port, prints the port on stdout, serves the fixed pages below and
exits when its stdin closes (so it goes away with the test)."""
import gzip
import http.server
import sys
import threading
import time

PAGE = b"""<!DOCTYPE html>
<html><head><title>Fetch test page</title>
<style>body { color: red; }</style>
<script>var hidden = "script text";</script>
</head>
<body>
<header><a href="/">Site logo</a></header>
<nav><ul><li><a href="/home">Home</a></li><li><a href="/about">About</a></li></ul></nav>
<main>
<h1>Main  title</h1>
<p>First paragraph with a <a href="docs/intro.html">relative link</a> and
   <code>inline_code()</code>.</p>
<h2>Steps</h2>
<ul>
<li>Install &amp; configure</li>
<li>Run <a href="https://example.org/run">the tool</a></li>
</ul>
<pre>int main(void)
{
    return 0;
}
</pre>
<table>
<tr><th>Name</th><th>Value</th></tr>
<tr><td>alpha</td><td>1</td></tr>
</table>
<form><input name="q"><button>Search</button></form>
<aside>Related articles</aside>
<noscript>Enable JavaScript</noscript>
<svg><text>vector text</text></svg>
</main>
<footer>Copyright footer</footer>
</body></html>
"""

LATIN1 = "<html><body><main><p>Caf\u00e9 na\u00efve \u00a9 2024</p></main></body></html>"
SJIS_TEXT = "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8"  # 日本語のテキスト
SJIS_META = ("<html><head><meta charset=\"Shift_JIS\"></head><body><p>" + SJIS_TEXT +
             "</p></body></html>")
LISTS = b"""<html><body><article>
<ol>
<li>First
  <ul><li>inner a</li><li>inner <b>b</b></li></ul>
</li>
<li>Second</li>
</ol>
<ul><li>plain</li></ul>
</article></body></html>
"""
JSON = b'{"name": "agenttools", "tags": ["a", "b"], "n": 3}\n'
PLAIN = b"line one\n  indented <b>not html</b>\nlast line\n"
BIG_LINE = b"0123456789abcde\n"  # 16 bytes

lock = threading.Lock()
count = 0


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, ctype, body, headers=()):
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def redirect(self, status, where):
        self.send(status, "text/html", b"<p>moved</p>", [("Location", where)])

    def do_GET(self):
        global count
        path = self.path
        if path == "/_count":
            with lock:
                n = count
            self.send(200, "text/plain", str(n).encode())
            return
        with lock:
            count += 1
        if path == "/page.html":
            self.send(200, "text/html; charset=utf-8", PAGE)
        elif path == "/lists.html":
            self.send(200, "text/html; charset=utf-8", LISTS)
        elif path == "/r1":
            self.redirect(302, "/r2")
        elif path == "/r2":
            self.redirect(301, "http://127.0.0.1:%d/r3" % self.server.server_port)
        elif path == "/r3":
            self.redirect(307, "plain.txt")
        elif path == "/loop-a":
            self.redirect(302, "/loop-b")
        elif path == "/loop-b":
            self.redirect(302, "/loop-a")
        elif path.startswith("/hop/"):
            n = int(path[5:])
            self.redirect(302, "/hop/%d" % (n + 1))
        elif path == "/to-file":
            self.redirect(302, "file:///etc/passwd")
        elif path == "/to-ftp":
            self.redirect(302, "ftp://127.0.0.1/")
        elif path == "/missing":
            self.send(404, "text/plain; charset=utf-8", b"No such page: /missing\n")
        elif path == "/big":
            body = BIG_LINE * (11 * 1024 * 1024 // len(BIG_LINE))
            self.send(200, "text/plain", body)
        elif path == "/slow":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"start\n")
            self.wfile.flush()
            time.sleep(8)
        elif path == "/latin1":
            self.send(200, "text/html; charset=ISO-8859-1", LATIN1.encode("latin-1"))
        elif path == "/latin1-quotes.txt":
            # labelled ISO-8859-1, written in windows-1252 (curly quotes, euro sign)
            self.send(200, "text/plain; charset=iso-8859-1", b"\x93quoted\x94 \x80 5\n")
        elif path == "/sjis.txt":
            self.send(200, "text/plain; charset=Shift_JIS", (SJIS_TEXT + "\n").encode("shift_jis"))
        elif path == "/sjis-meta.html":
            self.send(200, "text/html", SJIS_META.encode("shift_jis"))
        elif path == "/bad-utf8.txt":
            self.send(200, "text/plain; charset=utf-8", b"ok \xff\xfe end\n")
        elif path == "/gzip.txt":
            self.send(200, "text/plain; charset=utf-8", gzip.compress(PLAIN),
                      [("Content-Encoding", "gzip")])
        elif path == "/plain.txt":
            self.send(200, "text/plain; charset=utf-8", PLAIN)
        elif path == "/data.json":
            self.send(200, "application/json", JSON)
        elif path == "/image.png":
            self.send(200, "image/png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
        else:
            self.send(404, "text/plain", b"unknown test path\n")


def main():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    print(srv.server_port, flush=True)
    sys.stdin.read()
    srv.shutdown()


if __name__ == "__main__":
    main()
