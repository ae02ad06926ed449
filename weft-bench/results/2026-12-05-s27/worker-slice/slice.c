// Sets an EEVDF custom slice (sched_attr.sched_runtime, SCHED_OTHER) on the given thread ids.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
struct attr { uint32_t size, policy; uint64_t flags; int32_t nice; uint32_t prio; uint64_t runtime, deadline, period; uint32_t umin, umax; };
int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: slice NS TID...\n"); return 2; }
    uint64_t ns = strtoull(argv[1], 0, 10);
    int bad = 0;
    for (int i = 2; i < argc; i++) {
        struct attr a; memset(&a, 0, sizeof a); a.size = sizeof a; a.policy = 0; a.runtime = ns;
        if (syscall(SYS_sched_setattr, atoi(argv[i]), &a, 0) != 0) { perror(argv[i]); bad = 1; }
    }
    return bad;
}
