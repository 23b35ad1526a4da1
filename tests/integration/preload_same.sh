#!/usr/bin/env bash
# preload_same.sh LIB STRATEGY WORK — run one piece of real work with and without
# LD_PRELOAD=LIB HOARD_STRATEGY=STRATEGY; the test passes when both succeed with the same
# output. WORK names a case below. Extra HOARD_* settings pass through the environment.
set -u
lib=$1 strategy=$2 work=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

case $work in
  ls)      cmd='ls -la --time-style=+ /usr/bin /usr/lib | sort | md5sum' ;;
  sort)    cmd='seq 1 200000 | sed "s/\$/ line/" | sort -r | sort -n -k1,1 | md5sum' ;;
  python)  cmd='python3 -c "
import json, threading
d = {str(i): [i, str(i) * 3, {\"k\": i}] for i in range(200000)}
s = json.dumps(d)
out = []
def work(n):
    out.append(sum(len(x) for x in (str(j) * 5 for j in range(n))))
ts = [threading.Thread(target=work, args=(50000 + k,)) for k in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
print(len(s), len(json.loads(s)), sorted(out))"' ;;
  gcc)     cat > "$tmp/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
struct node { int v; struct node *next; };
int main(void) {
    struct node *h = NULL;
    for (int i = 0; i < 1000; i++) { struct node *n = malloc(sizeof *n); n->v = i; n->next = h; h = n; }
    long s = 0; while (h) { struct node *n = h->next; s += h->v; free(h); h = n; }
    printf("%ld\n", s); return 0;
}
C
           cmd="cd $tmp && gcc -O2 -Wall -o prog prog.c && ./prog && gcc -O2 -c prog.c -o p.o && md5sum < p.o" ;;
  *) echo "preload_same.sh: unknown work '$work'" >&2; exit 2 ;;
esac

want=$(timeout 120 bash -c "$cmd" 2>&1) || { echo "reference run failed: $want" >&2; exit 1; }
got=$(HOARD_STRATEGY=$strategy LD_PRELOAD=$lib timeout 120 bash -c "$cmd" 2>&1)
rc=$?
if [ $rc -ne 0 ] || [ "$got" != "$want" ]; then
  echo "FAIL: $work under $strategy (exit $rc)" >&2
  echo "--- without preload:"; echo "$want" | head -20
  echo "--- with $strategy:";   echo "$got" | head -20
  exit 1
fi
echo "ok: $work under $strategy: $(echo "$got" | tail -1)"
