"""What the samplers beside `./weft bench` share: finding the mesh's processes and asking them over kept-alive HTTP.

Imported by provider-inflight.py and where-requests-wait.py (run from any directory; they add this one to the path).
Run as `mesh_procs.py roles` it prints "TID ROLE" for every thread of the mesh's processes (trace-consumer-side.sh,
profile-window.sh); as `mesh_procs.py sidecars`, "PID ROLE" for every Weft sidecar (profile-window.sh, jit-window.sh);
as `mesh_procs.py served`, the requests the providers have served so far, summed, and the CLOCK_MONOTONIC
seconds when it read them (wake-census.sh, perf-ab.sh); as `mesh_procs.py admins`, "PID ROLE PORT" for every Weft
sidecar, PORT its admin port from its `--admin` argument (perf-ab.sh).
"""
import http.client, json, os, re, subprocess, sys, time


def processes():
    """(pid, argv as bytes) of every process running now."""
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            yield pid, open(f'/proc/{pid}/cmdline', 'rb').read().split(b'\0')
        except OSError:
            continue


def cmdlines():
    """(pid, argv as bytes) of every Weft CLI process (`dev.weft.cli.WeftCli ...`) running now."""
    return ((pid, c) for pid, c in processes() if b'dev.weft.cli.WeftCli' in c)


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


def role(argv):
    """What a process is in the mesh, from its argv, or None: sidecar:SERVICE, provider:NAME, consumer-app, bench,
    wrk, or haproxy/nginx/caddy:consumer|provider (the bench names their configurations after the side)."""
    a = [x.decode(errors='replace') for x in argv]
    name = os.path.basename(a[0]) if a else ''
    if 'dev.weft.cli.WeftCli' in a:
        cmd = a[a.index('dev.weft.cli.WeftCli') + 1] if a.index('dev.weft.cli.WeftCli') + 1 < len(a) else ''
        if cmd == 'sidecar' and '--service' in a:
            return 'sidecar:' + a[a.index('--service') + 1]
        if cmd == 'provider' and '--name' in a:
            return 'provider:' + a[a.index('--name') + 1]
        return {'consumer': 'consumer-app', 'bench': 'bench'}.get(cmd, 'weft:' + cmd)
    if name in ('wrk', 'haproxy', 'nginx', 'caddy'):
        if name == 'wrk':
            return name
        joined = ' '.join(a)
        return name + (':consumer' if 'consumer' in joined else ':provider' if 'provider' in joined else '')
    return None


def roles():
    """{tid: role} of every thread of every process in the mesh."""
    out = {}
    for pid, argv in processes():
        r = role(argv)
        try:
            tids = os.listdir(f'/proc/{pid}/task') if r else []
        except OSError:
            continue
        for t in tids:
            out[int(t)] = r
    return out


def sidecars():
    """{pid: role} of every Weft sidecar process running now."""
    return {int(pid): r for pid, argv in processes() if (r := role(argv) or '').startswith('sidecar:')}


if __name__ == '__main__' and sys.argv[1:] == ['roles']:
    for t, r in sorted(roles().items()):
        print(t, r)
elif __name__ == '__main__' and sys.argv[1:] == ['served']:
    conns, total, ports = {}, 0, providers()
    for name, port in ports.items():  # connected first, so that the reads below follow each other closely
        conns[name] = http.client.HTTPConnection('127.0.0.1', port, timeout=1)
        conns[name].connect()
    read_at = time.clock_gettime(time.CLOCK_MONOTONIC)
    for name, port in ports.items():
        body = get(conns, name, port, '/stats')
        if body is None:
            sys.exit(f'provider {name} did not answer GET /stats')
        total += json.loads(body)['served']
    print(total, f'{read_at:.6f}')
elif __name__ == '__main__' and sys.argv[1:] == ['sidecars']:
    for pid, r in sorted(sidecars().items()):
        print(pid, r)
elif __name__ == '__main__' and sys.argv[1:] == ['admins']:
    for pid, r in sorted(sidecars().items()):
        a = [x.decode(errors='replace') for x in dict(processes())[str(pid)]]
        print(pid, r, a[a.index('--admin') + 1].rpartition(':')[2] if '--admin' in a else '-')
