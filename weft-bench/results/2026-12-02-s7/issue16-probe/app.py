# A provider app on a plain socket: /ok answers well; /bad/* break HTTP/1.1 the way issue 16's probe did.
import socket, sys, threading, time
BAD = {
 "/bad/cl-abc": b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nhello",
 "/bad/two-cl": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
 "/bad/cl-te": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
 "/bad/bare-cr": b"HTTP/1.1 200 OK\r\nX-A: 1\rX-B: 2\r\nContent-Length: 5\r\n\r\nhello",
 "/bad/bare-lf": b"HTTP/1.1 200 OK\nX-A: 1\r\nContent-Length: 5\r\n\r\nhello",
 "/bad/nul": b"HTTP/1.1 200 OK\r\nX-A: a\x00b\r\nContent-Length: 5\r\n\r\nhello",
}
def serve(c):
    f = c.makefile("rb")
    try:
        while True:
            line = f.readline()
            if not line: return
            path = line.split(b" ")[1].decode() if len(line.split(b" ")) > 1 else "/"
            cl = 0
            while True:
                h = f.readline()
                if h in (b"\r\n", b"\n", b""): break
                if h.lower().startswith(b"content-length:"): cl = int(h.split(b":")[1])
            body = f.read(cl) if cl else b""
            if path in BAD:
                c.sendall(BAD[path]); time.sleep(0.2); c.close(); return
            msg = ("ok %s %d" % (path, len(body))).encode()
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(msg) + msg)
    except Exception:
        pass
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(512)
while True:
    c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
