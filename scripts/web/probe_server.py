#!/usr/bin/env python3
"""A remote-content probe for the proxy's tests: an HTTP server on 127.0.0.1 that logs every
request it gets (one JSON line on stdout: path, headers, client address) and answers by path:

  /<name>.png            a 1x1 PNG (image/png)
  /big.png               6 MiB declared as image/png (over the proxy's 5 MiB limit)
  /big-unsized.png       6 MiB of image/png without Content-Length (the limit while reading)
  /page.html             text/html (not an image)
  /redirect-ok           302 to /redirected.png on this server
  /redirect-private      302 to http://10.0.0.1/x.png
  /redirect-local?port=N 302 to http://127.0.0.1:N/x.png (another local port)
  /slow.png              answers after 60 s

The first line on stdout is `port N`; with --log FILE each request's line is also appended there.
"""
import argparse
import json
import struct
import sys
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

def _png():
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0\xff\x80\x00\xff")) + chunk(b"IEND", b"")


PIXEL = _png()

LOG = None


class Probe(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", content_type=None, headers=(), length=True):
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for name, value in headers:
            self.send_header(name, value)
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def do_GET(self):
        parts = urlsplit(self.path)
        line = json.dumps({"path": self.path, "headers": dict(self.headers.items()), "client": self.client_address[0]})
        print(line, flush=True)
        if LOG:
            with open(LOG, "a") as log:
                log.write(line + "\n")
        path = parts.path
        if path == "/big.png":
            self.answer(200, b"\0" * (6 * 1024 * 1024), "image/png")
        elif path == "/big-unsized.png":
            self.answer(200, b"\0" * (6 * 1024 * 1024), "image/png", length=False)
        elif path == "/page.html":
            self.answer(200, b"<p>not an image</p>", "text/html")
        elif path == "/redirect-ok":
            self.answer(302, headers=[("Location", "/redirected.png")])
        elif path == "/redirect-private":
            self.answer(302, headers=[("Location", "http://10.0.0.1/x.png")])
        elif path == "/redirect-local":
            port = parse_qs(parts.query).get("port", ["1"])[0]
            self.answer(302, headers=[("Location", f"http://127.0.0.1:{port}/x.png")])
        elif path == "/slow.png":
            time.sleep(60)
            self.answer(200, PIXEL, "image/png")
        elif path.endswith(".png"):
            self.answer(200, PIXEL, "image/png")
        else:
            self.answer(404, b"no", "text/plain")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", help="also append each request's JSON line to this file")
    args = parser.parse_args()
    global LOG
    LOG = args.log
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Probe)
    server.daemon_threads = True
    print(f"port {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
