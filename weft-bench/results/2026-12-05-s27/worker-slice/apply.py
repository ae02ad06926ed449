#!/usr/bin/env python3
"""Every 2 s: gives threads whose name matches PATTERN an EEVDF slice of NS (0: only logs them, a control run)."""
import ctypes, os, re, sys, time
ns, pat, log = int(sys.argv[1]), re.compile(sys.argv[2]), open(sys.argv[3], "a")
libc = ctypes.CDLL(None, use_errno=True)
class Attr(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("policy", ctypes.c_uint32), ("flags", ctypes.c_uint64),
                ("nice", ctypes.c_int32), ("prio", ctypes.c_uint32), ("runtime", ctypes.c_uint64),
                ("deadline", ctypes.c_uint64), ("period", ctypes.c_uint64), ("umin", ctypes.c_uint32), ("umax", ctypes.c_uint32)]
done = set()
while True:
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if open(f"/proc/{pid}/comm").read().strip() not in ("java", "haproxy", "nginx"):
                continue
            for tid in os.listdir(f"/proc/{pid}/task"):
                if tid in done:
                    continue
                name = open(f"/proc/{pid}/task/{tid}/comm").read().strip()
                if pat.search(name):
                    done.add(tid)
                    if ns:
                        a = Attr(size=ctypes.sizeof(Attr), runtime=ns)
                        if libc.syscall(314, int(tid), ctypes.byref(a), 0) != 0:
                            print(time.strftime("%T"), tid, name, "errno", ctypes.get_errno(), file=log, flush=True)
                            continue
                    print(time.strftime("%T"), tid, name, ns, file=log, flush=True)
        except (FileNotFoundError, ProcessLookupError):
            pass
    time.sleep(2)
