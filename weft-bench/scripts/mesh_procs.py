"""What the samplers beside `./weft bench` share: finding the mesh's processes and asking them over kept-alive HTTP.

Imported by provider-inflight.py and where-requests-wait.py (run from any directory; they add this one to the path).
"""
import http.client, os, re, subprocess


def cmdlines():
    """(pid, argv as bytes) of every Weft CLI process (`dev.weft.cli.WeftCli ...`) running now."""
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            c = open(f'/proc/{pid}/cmdline', 'rb').read().split(b'\0')
        except OSError:
            continue
        if b'dev.weft.cli.WeftCli' in c:
            yield pid, c


def providers():
    """{name: port} of the example providers (`weft provider --name NAME`), from their listening sockets."""
    found = {pid: c[c.index(b'--name') + 1].decode() for pid, c in cmdlines()
             if b'provider' in c and b'sidecar' not in c}
    ports = {}
    if found:
        ss = subprocess.run(['ss', '-ltnpH'], capture_output=True, text=True).stdout
        for line in ss.splitlines():
            m = re.search(r'127\.0\.0\.1\]?:(\d+).*pid=(\d+)', line)
            if m and m.group(2) in found:
                ports[found[m.group(2)]] = int(m.group(1))
    return ports


def get(conns, key, port, path):
    """The body of GET path on 127.0.0.1:port over the connection kept in conns[key], or None (then dropped)."""
    c = conns.get(key) or http.client.HTTPConnection('127.0.0.1', port, timeout=1)
    conns[key] = c
    try:
        c.request('GET', path)
        return c.getresponse().read()
    except Exception:
        conns.pop(key, None)
        return None
