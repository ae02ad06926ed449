# Gaps between consecutive messages a proxy sends on three edges (the time bytes became readable at the receiver,
# fired in the sending thread), from a reads trace: python3 departure-gaps.py DIR (reads.txt.gz, tid-roles.txt).
# Printed for weft5, http1 and haproxy2 into departure-gaps.txt (session 20).
import gzip, sys, os
d=sys.argv[1]
roles={int(l.split()[0]):l.split()[1] for l in open(d+'/tid-roles.txt')}
ev=[]
for line in gzip.open(d+'/reads.txt.gz','rt'):
    f=line.split()
    if len(f)>=4 and f[2] in('ready','recv'): ev.append((float(f[1]),f[2],int(f[0]),f[3],int(f[4]) if f[2]=='recv' else 0))
ev.sort()
reader={}
for t,k,tid,sk,n in ev:
    if k=='recv' and 0<n<2**31 and tid in roles: reader.setdefault(sk,roles[tid])
def gaps(src_pred, dst_pred, label):
    ts=[t for t,k,tid,sk,n in ev if k=='ready' and tid in roles and src_pred(roles[tid]) and dst_pred(reader.get(sk,''))]
    g=sorted(b-a for a,b in zip(ts,ts[1:]))
    if not g: return
    q=lambda p:g[int(p*len(g))]*1e6
    print(f'{label:45s} n={len(ts)} gap us p10 {q(.1):.1f} p25 {q(.25):.1f} p50 {q(.5):.1f} p75 {q(.75):.1f}; gaps<15us {sum(1 for x in g if x<15e-6)/len(g)*100:.0f}%')
side=lambda r: r.endswith(':provider') and not r.startswith('provider')
cside=lambda r: r.endswith(':consumer') and not r.startswith('provider')
gaps(side, lambda r:r.startswith('provider:'), 'provider-side proxy -> providers')
gaps(cside, lambda r:r=='consumer-app', 'consumer-side proxy -> consumer app')
gaps(lambda r:r=='consumer-app', cside, 'consumer app -> consumer-side proxy')
