# A `perf script -s` handler: prints, per event, "TID SECONDS ready|recv SOCKET [BYTES]" for the two socket
# tracepoints trace-consumer-side.sh records, and "TID SECONDS switch PREV_TID PREV_STATE NEXT_TID STACK NEXT_NAME PREV_NAME" for its
# context switches (perf's text output leaves sk_data_ready's socket address out).
# perf passes each tracepoint's common fields, then its own fields, positionally.
def sock__sk_data_ready(*a):
    print(a[5], f'{a[3]}.{a[4]:09d}', 'ready', hex(a[8]))


def sock__sock_recv_length(*a):
    # The byte count, or a negative errno (-11: nothing to read), which perf hands over as unsigned.
    print(a[5], f'{a[3]}.{a[4]:09d}', 'recv', hex(a[8]), a[11] - (1 << 32) if a[11] >= 1 << 31 else a[11])


def sched__sched_switch(*a):
    # Where the task switched out was: the innermost named frames of its stack (kernel, then libjvm; none when
    # recorded without call graphs); then the names of the task switched in and of the one switched out (spaces made
    # underscores, so the line splits on blanks). perf_events.py reads these lines.
    frames = [f['sym']['name'] for f in (a[7] or []) if f.get('sym') and f['sym'].get('name')][:24]
    print(a[5], f'{a[3]}.{a[4]:09d}', 'switch', a[9], a[11], a[13], ';'.join(frames) or '-',
          str(a[12]).replace(' ', '_'), str(a[8]).replace(' ', '_'))
