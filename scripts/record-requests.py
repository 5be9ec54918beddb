#!/usr/bin/env python3
"""Record the model requests a program sends: their size (scripts/bench-tokens.sh) and when the
first one arrives (scripts/bench-first-request.sh).

Usage: record-requests.py UPSTREAM_PORT LOG

A plain HTTP proxy on a free port of 127.0.0.1 (printed first) that appends one JSON line per
request to LOG ({"path", "bytes", "t": the Unix time it arrived}) and forwards it to the scripted
model on 127.0.0.1:UPSTREAM_PORT. The answer is buffered before it is passed on: the proxy times
when requests leave, never how fast answers stream.
Standard library only; loopback only.
"""
import http.server
import json
import sys
import time
import urllib.error
import urllib.request

UPSTREAM, LOG = int(sys.argv[1]), sys.argv[2]
SKIP = {"host", "content-length", "connection", "accept-encoding", "transfer-encoding"}


class Recorder(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        with open(LOG, "a") as log:
            log.write(json.dumps({"path": self.path, "bytes": len(body), "t": time.time()}) + "\n")
        request = urllib.request.Request(
            f"http://127.0.0.1:{UPSTREAM}{self.path}", data=body, method=self.command
        )
        for name, value in self.headers.items():
            if name.lower() not in SKIP:
                request.add_header(name, value)
        try:
            with urllib.request.urlopen(request) as answer:
                status, headers, data = answer.status, answer.getheaders(), answer.read()
        except urllib.error.HTTPError as error:
            status, headers, data = error.code, error.headers.items(), error.read()
        self.send_response(status)
        for name, value in headers:
            if name.lower() not in SKIP:
                self.send_header(name, value)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
