#!/bin/bash
# tlb-window.sh PLANE THREADS OUTDIR: one issue12 round; 5 s into its measured window, 8 s of tracepoints machine-wide.
P=$1; T=$2; O=$3
S=/tmp/b19/weft-bench/scripts
. $S/measured-round.sh
start_round $P $T $O --duration 30s
sleep 5
python3 $S/mesh_procs.py roles > $O/tid-roles.txt
perf record -a -o $O/tp.data -e tlb:tlb_flush,sched:sched_migrate_task,exceptions:page_fault_user,exceptions:page_fault_kernel,syscalls:sys_enter_munmap,syscalls:sys_enter_madvise,syscalls:sys_enter_mprotect,syscalls:sys_enter_mmap,irq_vectors:call_function_entry,irq_vectors:call_function_single_entry,irq_vectors:reschedule_entry,sched:sched_switch -- sleep 8 > $O/rec.err 2>&1
wait $B
perf script -i $O/tp.data -F comm,pid,tid,cpu,event,trace 2>/dev/null | gzip > $O/tp.txt.gz
