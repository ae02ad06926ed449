import sys, statistics as st, gzip
for f in sys.argv[1:]:
    rows=[l.split('\t') for l in (gzip.open(f, 'rt') if f.endswith('.gz') else open(f))]
    xs=[sum(int(x) for x in r[1:]) for r in rows if len(r)==4 and min(int(x) for x in r[1:])>=0]
    ts=[float(r[0]) for r in rows if len(r)==4]
    # the last 40 s with samples (the measured window and the warm-up's end)
    if not xs: print(f,'none'); continue
    n=len(xs); tail=xs[-int(n*0.3):]
    print(f"{f}: n={len(tail)} mean {st.mean(tail):.0f} sd {st.pstdev(tail):.0f} >=500 {100*sum(x>=500 for x in tail)/len(tail):.1f}% <=200 {100*sum(x<=200 for x in tail)/len(tail):.1f}%")
