import sys, os, re, time
sys.path.insert(0, '/work/main/weft-bench/scripts')
from mesh_procs import cmdlines, get
admin=None
end=time.time()+float(sys.argv[2]); out=open(sys.argv[1],'w'); conns={}
while time.time()<end:
    if admin is None:
        for _, c in cmdlines():
            if b'sidecar' in c and b'--service' in c and c[c.index(b'--service')+1]==b'consumer':
                admin=int(c[c.index(b'--admin')+1].decode().rsplit(':',1)[1])
        if admin is None: time.sleep(0.5); continue
    b=get(conns,'a',admin,'/metrics')
    if b:
        lines=[l for l in b.decode().splitlines() if l.startswith(('weft_upstream_queue_depth','weft_upstream_in_flight','weft_upstream_concurrency_limit'))]
        out.write(f'{time.time():.3f}\t'+'\t'.join(lines)+'\n')
    time.sleep(0.02)
