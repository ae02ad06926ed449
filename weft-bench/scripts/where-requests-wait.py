#!/usr/bin/env python3
"""Where the mesh's requests are, every ~20 ms, beside `./weft bench --profile issue12 --planes weft...`.

Usage: where-requests-wait.py OUT.tsv SECONDS       (sample; run beside the bench, any plane)
       where-requests-wait.py --report OUT.tsv [CONNS] (summarise; CONNS defaults to 512)

Each sample: the time, the example providers' requests in flight (the sum of their GET /stats inFlight) and the
consumer-side sidecar's outbound requests in flight (weft_requests_in_flight{direction="outbound"} from its admin
/metrics, found from its command line); every fifth sample also the number of connections to the sidecar's
outbound listener with unread bytes (`ss`: requests the consumer app sent that the sidecar has not read yet; each
connection carries one request at a time), else -1. With CONNS requests always open in the generator, they split
into: at the providers; in the sidecars and the link between them (consumer side's outbound minus the providers');
unread in the consumer-side sidecar's sockets; and the rest outside it (in wrk, the consumer app and their
sockets). With HAProxy or nginx in place of the sidecars only the providers and the unread connections are
sampled. The report prints that split over all samples and over the troughs (200 or fewer at the providers), when
the cores go idle.
Reading the metrics page costs the consumer-side sidecar some CPU (about 22 KB rendered 50 times a second): use it
to see where requests wait, not to measure CPU.
"""
import gzip, json, os, re, statistics as st, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mesh_procs import cmdlines, get, providers


def ports_of_consumer_side():
    """(the consumer-side sidecar's admin port or None, the port the consumer app sends its requests to)."""
    admin = listen = None
    for _, c in cmdlines():
        if b'consumer' in c and b'--provider-url' in c:
            # Where the consumer app sends its requests: the consumer-side proxy's listener, whichever plane runs.
            listen = int(c[c.index(b'--provider-url') + 1].decode().rstrip('/').rsplit(':', 1)[1])
        elif b'sidecar' in c and b'--service' in c and c[c.index(b'--service') + 1] == b'consumer':
            admin = int(c[c.index(b'--admin') + 1].decode().rsplit(':', 1)[1])
    return admin, listen


def unread(port):
    """Connections to 127.0.0.1:port with bytes in their receive queue."""
    ss = subprocess.run(['ss', '-tnH', 'state', 'established', f'( sport = :{port} )'], capture_output=True,
                        text=True).stdout
    return sum(1 for line in ss.splitlines() if line.split() and line.split()[0] != '0')


OUTBOUND = re.compile(rb'^weft_requests_in_flight\{[^}]*direction="outbound"[^}]*\} (\d+)', re.M)


def sample(out_path, seconds):
    out = open(out_path, 'w')
    end = time.time() + seconds
    conns, ports, admin, listen, last_scan, tick = {}, {}, None, None, 0, 0
    while time.time() < end:
        now = time.time()
        if now - last_scan > 3 or len(ports) < 3 or listen is None:
            p, (a, l) = providers(), ports_of_consumer_side()
            if (p, a, l) != (ports, admin, listen):
                ports, admin, listen, conns = p, a, l, {}
            last_scan = now
        if len(ports) < 3 or listen is None:
            time.sleep(0.5)
            continue
        bodies = [get(conns, name, port, '/stats') for name, port in sorted(ports.items())]
        at_providers = -1 if None in bodies else sum(json.loads(b)['inFlight'] for b in bodies)
        # Without a Weft consumer-side sidecar (HAProxy, nginx) only the providers and the unread connections.
        body = get(conns, 'admin', admin, '/metrics') if admin else None
        m = OUTBOUND.search(body) if body else None
        tick += 1
        waiting = unread(listen) if tick % 5 == 0 else -1
        if at_providers >= 0 and (m or admin is None):
            out.write(f'{now:.3f}\t{at_providers}\t{m.group(1).decode() if m else -1}\t{waiting}\n')
        time.sleep(max(0, 0.02 - (time.time() - now)))


def report(path, conns):
    lines = gzip.open(path, 'rt') if path.endswith('.gz') else open(path)
    rows = [tuple(int(x) for x in l.split('\t')[1:]) for l in lines if l.count('\t') == 3]
    rows = rows[-int(len(rows) * 0.3):]  # the end of the run: the JIT settled, the measured window
    for label, sel in (('all samples', rows), ('troughs (<= 200 at the providers)', [r for r in rows if r[0] <= 200])):
        if not sel:
            print(f'{label}: none')
            continue
        prov = st.mean(r[0] for r in sel)
        ss = [r[2] for r in sel if r[2] >= 0]
        waiting = f'{st.mean(ss):.0f} (n={len(ss)})' if ss else 'not sampled'
        if min(r[1] for r in sel) < 0:
            print(f'{label}: n={len(sel)}  at the providers {prov:.0f}  unread by the consumer-side proxy {waiting}')
            continue
        sidecars = st.mean(r[1] - r[0] for r in sel)
        outside = st.mean(conns - r[1] for r in sel)
        print(f'{label}: n={len(sel)}  at the providers {prov:.0f}  in the sidecars and link {sidecars:.0f}  '
              f'outside the consumer-side sidecar {outside:.0f}, of which unread in its sockets {waiting}')


if __name__ == '__main__':
    if sys.argv[1] == '--report':
        report(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 512)
    else:
        sample(sys.argv[1], float(sys.argv[2]))
