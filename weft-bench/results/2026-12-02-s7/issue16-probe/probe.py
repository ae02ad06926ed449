import socket, sys, time, threading, re
OUT, UP, PADM, CADM = [int(x) for x in sys.argv[1:5]]
def conn(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=15); return s
def answer(s):
    data = b""; s.settimeout(15)
    try:
        while b"\r\n\r\n" not in data:
            d = s.recv(65536)
            if not d: break
            data += d
        m = re.search(rb"content-length: *(\d+)", data, re.I)
        if m:
            head, _, body = data.partition(b"\r\n\r\n")
            while len(body) < int(m.group(1)):
                d = s.recv(65536)
                if not d: break
                body += d
            data = head + b"\r\n\r\n" + body
    except socket.timeout:
        pass
    return data
def status(data):
    m = re.match(rb"HTTP/1.1 (\d+)", data); return int(m.group(1)) if m else None
def kind(data):
    m = re.search(rb"x-weft-error: *([^\r\n]+)", data, re.I); return m.group(1).decode() if m else None
def send(port, raw):
    s = conn(port)
    try: s.sendall(raw)
    except OSError: pass
    t = time.time(); a = answer(s); s.close(); return a, time.time() - t
results = []
def row(name, a, t, expect):
    st, k = status(a), kind(a)
    ok = (st, k) == expect
    results.append(ok)
    print("%-60s -> %s %s in %.2fs   %s" % (name, st, k, t, "OK" if ok else "EXPECTED %s" % (expect,)))
ch = lambda c: b"POST /echo HTTP/1.1\r\nHost: provider\r\nTransfer-Encoding: chunked\r\n\r\n" + c
cases = [
 ("chunk size zz", ch(b"zz\r\nx\r\n0\r\n\r\n"), (400, "bad-request")),
 ("chunk extension of 100 KB", ch(b"1;a=" + b"b" * 100 * 1024 + b"\r\nx\r\n0\r\n\r\n"), (400, "bad-request")),
 ("absolute-form URI naming another host", b"GET http://evil.example/x HTTP/1.1\r\nHost: provider\r\n\r\n", (400, "bad-request")),
 ("two Host headers", b"GET /x HTTP/1.1\r\nHost: provider\r\nHost: evil.example\r\n\r\n", (400, "bad-request")),
 ("no Host on HTTP/1.1", b"GET /x HTTP/1.1\r\nAccept: */*\r\n\r\n", (400, "bad-request")),
 ("HTTP/2 preface PRI *", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", (400, "bad-request")),
]
for port, where in ((OUT, "outbound"), (UP, "upstream")):
    for name, raw, exp in cases:
        a, t = send(port, raw); row("[%s] %s" % (where, name), a, t, exp)
# slow head: one byte per 0.5 s
s = conn(UP); t = time.time()
req = b"GET /ok HTTP/1.1\r\nHost: provider\r\nX-Slow: " + b"a" * 40
try:
    for b in req:
        s.sendall(bytes([b])); time.sleep(0.5)
        s.settimeout(0.01)
        try:
            d = s.recv(65536)
            if d: break
        except socket.timeout: pass
except OSError: pass
s.settimeout(15); a = d if 'd' in dir() and d else answer(s); row("[upstream] head at 1 byte per 0.5 s (--request-head-timeout 2s)", a, time.time() - t, (408, "request-timeout"))
# idle keep-alive
s = conn(UP); t = time.time(); s.settimeout(15)
d = s.recv(100); print("%-60s -> closed after %.2fs with %d bytes   %s" % ("[upstream] idle connection (--idle-timeout 3s)", time.time() - t, len(d), "OK" if d == b"" and 2.9 < time.time() - t < 6 else "UNEXPECTED")); results.append(d == b"")
# body stall
s = conn(UP); t = time.time(); s.sendall(b"POST /ok HTTP/1.1\r\nHost: provider\r\nContent-Length: 1000\r\n\r\n" + b"x" * 500)
a = answer(s); row("[upstream] body stops halfway (--body-timeout 2s)", a, time.time() - t, (408, "body-timeout"))
# 129 header fields beside 40 innocent requests
innocent = []
def good():
    a, _ = send(UP, b"GET /ok HTTP/1.1\r\nHost: provider\r\n\r\n"); innocent.append(status(a))
ths = [threading.Thread(target=good) for _ in range(40)]
[t_.start() for t_ in ths]
many = b"GET /ok HTTP/1.1\r\nHost: provider\r\n" + b"".join(b"x-h%d: v\r\n" % i for i in range(129)) + b"\r\n"
a, t = send(UP, many); row("[upstream] 129 header fields (2.4 KB)", a, t, (431, "headers-too-large"))
mesh = b"GET /ok HTTP/1.1\r\nHost: provider\r\n" + b"".join(b"x-f%d: v\r\n" % i for i in range(127)) + b"\r\n"
a, t = send(UP, mesh); row("[upstream] 127 fields: fits the listener, not the mesh link", a, t, (431, "headers-too-large"))
[t_.join() for t_ in ths]
print("%-60s -> %s   %s" % ("  40 innocent requests beside it", sorted(set(innocent)), "OK" if innocent.count(200) == 40 else "UNEXPECTED")); results.append(innocent.count(200) == 40)
# app -> client
for p in ("/bad/cl-abc", "/bad/two-cl", "/bad/cl-te", "/bad/bare-cr", "/bad/bare-lf", "/bad/nul"):
    a, t = send(UP, b"GET %s HTTP/1.1\r\nHost: provider\r\n\r\n" % p.encode()); row("[app answer] " + p, a, t, (502, "app-protocol-error"))
a, t = send(UP, b"GET /ok HTTP/1.1\r\nHost: provider\r\n\r\n"); row("[upstream] a good request after all that", a, t, (200, None))
for name, port in (("provider", PADM), ("consumer", CADM)):
    a, _ = send(port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    for l in a.decode(errors="replace").splitlines():
        if (l.startswith("weft_rejected_total") and not l.endswith(" 0")) or l.startswith("weft_connections_closed_total"):
            print("  %s sidecar: %s" % (name, l))
print("PASSED %d of %d" % (sum(results), len(results)))
