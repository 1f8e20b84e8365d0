#!/usr/bin/env python3
"""slow_clients.py: holds a few hundred idle HTTP connections to deepshared (a partial request line each,
never finished; dropped ones are opened again) from a handful of loopback addresses, and meanwhile times
GET /metrics and GET /healthz from 127.0.0.1. Standard library only.

usage: slow_clients.py PORT [CONNECTIONS (300)] [SECONDS (12)] [SOURCES (6)]
Prints one line (requests answered, the slowest of each, slow connections the server kept); exits 1 when
a request failed, answered other than 200, or took over 2 s."""
import http.client
import socket
import sys
import time

port = int(sys.argv[1])
want = int(sys.argv[2]) if len(sys.argv) > 2 else 300
secs = float(sys.argv[3]) if len(sys.argv) > 3 else 12
nsrc = int(sys.argv[4]) if len(sys.argv) > 4 else 6
LIMIT = 2.0

slow = []
refused = 0
peak = 0


def prune():
    """Drops the slow connections the server closed."""
    alive = []
    for s in slow:
        try:
            s.setblocking(False)
            if s.recv(1) == b"":
                s.close()
                continue
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            continue
        alive.append(s)
    slow[:] = alive


def top_up():
    """Opens slow connections until `want` are held."""
    global refused, peak
    prune()
    i = len(slow)
    while len(slow) < want:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(1)
        try:
            s.bind(("127.0.0.%d" % (2 + i % nsrc), 0))
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: slow\r\n")  # never ends the header
            slow.append(s)
        except OSError:
            refused += 1
            s.close()
            if refused > 100 * want:
                break
        i += 1
        if i > 3 * want + len(slow):
            break
    peak = max(peak, len(slow))


def timed_get(path):
    t0 = time.monotonic()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=LIMIT, source_address=("127.0.0.1", 0))
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        c.close()
        return time.monotonic() - t0, r.status
    except OSError as e:
        return time.monotonic() - t0, str(e)


asked = answered = 0
worst = {"/metrics": 0.0, "/healthz": 0.0}
failures = []
end = time.monotonic() + secs
while time.monotonic() < end:
    top_up()
    for path in ("/metrics", "/healthz"):
        asked += 1
        dt, status = timed_get(path)
        worst[path] = max(worst[path], dt)
        if status == 200 and dt <= LIMIT:
            answered += 1
        else:
            failures.append("%s: %s after %.2f s" % (path, status, dt))
    time.sleep(0.5)
time.sleep(0.5)
prune()
kept = len(slow)
for s in slow:
    s.close()
print("answered %d of %d, max /metrics %.3f s, max /healthz %.3f s; slow connections: %d opened at once, %d kept "
      "by the server, %d refused at connect%s"
      % (answered, asked, worst["/metrics"], worst["/healthz"], peak, kept, refused,
         "; " + "; ".join(failures[:3]) if failures else ""))
sys.exit(0 if answered == asked and asked > 0 else 1)
