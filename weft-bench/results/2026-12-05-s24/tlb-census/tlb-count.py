import gzip, re, sys, csv, collections
for d in sys.argv[1:]:
    roles = {}
    for line in open(d + '/tid-roles.txt'):
        t, r = line.split(None, 1); roles[int(t)] = r.strip()
    rows = list(csv.DictReader(open(d + '/res/rounds.csv')))
    qps = float([r for r in rows if r.get('section', 'mesh') == 'mesh'][-1]['qps'])
    n = qps * 8
    c = collections.Counter()
    for line in gzip.open(d + '/tp.txt.gz', 'rt'):
        m = re.match(r'\s*(.+?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+(\S+):\s*(.*)', line)
        if not m: continue
        comm, pid, tid, cpu, ev, rest = m.groups()
        r = roles.get(int(tid)) or roles.get(int(pid)) or 'other'
        kind = r.split(':')[0] if not r.startswith('sidecar') else 'sidecar'
        if r.startswith(('haproxy', 'nginx')): kind = 'proxy'
        if ev == 'tlb:tlb_flush':
            rm = re.search(r'reason:(\S+)', rest); ev += ':' + (rm.group(1) if rm else '?')
        if ev == 'sched:sched_switch':
            continue
        c[(kind, ev)] += 1
    print(d, 'qps %.0f' % qps)
    for (k, ev), v in sorted(c.items()):
        print('  %-10s %-45s %8d  %.4f/req' % (k, ev, v, v / n))
