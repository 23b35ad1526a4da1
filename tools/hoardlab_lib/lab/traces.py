"""The lab's allocation traces (harness/traces/, README.md there): real programs recorded with
libhoardlab's trace recorder (HOARD_TRACE, src/core/instruments/trace.c), each cut to its first EVENTS
events and xz-compressed, replayed by hlbench's `replay` workload; `grade` scores a strategy's
utilization and speed on them.

`hoardlab traces` lists them; `--record [NAME...]` records them again from RECIPES (each
command runs in a fresh temporary folder with the inputs it makes itself, so a recording is
repeatable on any machine with the programs); `--unpack DIR` writes them out for `hlbench
replay --trace` or `hoardlab run replay -p trace=PATH`."""
import glob
import lzma
import os
import shutil
import subprocess
import tempfile

from ..common import REPO, ToolError, artifact, build_dir, log

DIR = os.path.join(REPO, "harness", "traces")
EVENTS = 60000          # records kept from the start of each trace (a prefix is a valid trace)
CAP_BYTES = 3 << 20     # all the shipped traces together, compressed

PY_THREADS = ("import threading\n"
              "def work(k):\n"
              "    d = {}\n"
              "    for i in range(20000):\n"
              "        d[i % 997] = [str(i) * (i % 7 + 1), {'k': k, 'i': i}]\n"
              "        if i % 5 == 0: d.pop((i * 7) % 997, None)\n"
              "ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]\n"
              "[t.start() for t in ts]; [t.join() for t in ts]\n")
SQL = ("create table t(id integer primary key, name text, v real);\n"
       "with recursive c(x) as (select 1 union all select x+1 from c where x < 20000)\n"
       "insert into t select x, hex(randomblob(8 + x % 40)), x * 0.5 from c;\n"
       "create index t_name on t(name);\n"
       "select count(*), sum(v) from t where name like 'A%';\n"
       "select name from t order by v desc limit 5;\n"
       "delete from t where id % 3 = 0; vacuum;\n")
C_SOURCE = "".join("struct s%d { int a[%d]; char *n; };\n"
                   "static int f%d(struct s%d *p, int k) { int t = 0; for (int i = 0; i < %d; i++)"
                   " t += p->a[i] * k + i; return t ^ %d; }\n" % ((i,) * 2 + (i, i, i + 1, i))
                   for i in range(1, 300))
C_SOURCE += "int main(void) { return 0; }\n"

# name: (what the program does, shell command run in a fresh folder with
# the files of INPUTS). Python runs with PYTHONMALLOC=malloc: its own small-object allocator
# would otherwise serve most of its allocations from arenas, out of the trace's sight.
RECIPES = {
    "python3": ("Python starts, imports json, re, collections and runs a dict-heavy loop",
                "PYTHONMALLOC=malloc {python} -c 'import json, re, collections; "
                "d = collections.Counter(re.findall("
                "\"[a-z]+\", json.dumps([{{str(i): [i] * (i % 9)}} for i in range(30000)])))'"),
    "python3-threads": ("four Python threads building and trimming dicts of lists",
                        "PYTHONMALLOC=malloc {python} threads.py"),
    "sqlite3": ("sqlite3 inserts 20000 rows, indexes, queries, deletes a third, vacuums",
                "sqlite3 db.sqlite < q.sql"),
    "gcc": ("gcc -O2 compiles a 600-line C file (the cc1 process)", "gcc -O2 -c big.c"),
    "git": ("git init, add and commit 200 files, then git log -p and a threaded git grep",
            "git init -q r && cd r && for i in $(seq 200); do seq $i 3 $((i * 40)) > f$i; done"
            " && git add . && git -c user.name=lab -c user.email=lab@x commit -qm lab && "
            "git log -p > /dev/null && git grep --threads 2 -c 17 > /dev/null"),
    "sort": ("sort --parallel=2 of a million lines of text in 4 MB buffers",
             "seq 1000000 | sed 's/$/ lab/' | rev > in.txt && sort --parallel=2 -S 4M in.txt "
             "> out.txt"),
    "perl": ("perl counts words into a hash and sorts them",
             "seq 60000 | perl -ne 'chomp; $h{{$_ % 5000}} .= $_; END {{ print scalar(keys %h) }}'"
             " > /dev/null"),
    "jq": ("jq builds and reduces a 20000-element JSON array",
           "jq -n '[range(20000) | {{k: tostring, v: [., . * 2]}}] | group_by(.k | length) | "
           "map(length)' > /dev/null"),
    "gawk": ("gawk appends 200000 numbers to strings in an associative array of 7919 keys",
             "seq 200000 | gawk '{{ w[$1 % 7919] = w[$1 % 7919] \" \" $1 }} END {{ n = 0; "
             "for (k in w) n += length(w[k]); print n }}' > /dev/null"),
    "node": ("node (V8 and its platform threads) builds and sorts an array of objects",
             "node -e 'let a = []; for (let i = 0; i < 200000; i++) a.push({{k: String(i % 997),"
             " v: [i]}}); a.sort((x, y) => x.k < y.k ? -1 : 1); console.log(a.length)'"
             " > /dev/null"),
    "redis": ("redis-server (io-threads 2) and redis-cli: 2000 SETs and 2000 GETs, then "
              "shutdown; the process with the most records",
              "redis-server --port 6399 --save '' --io-threads 2 --daemonize no & sleep 0.5; "
              "for i in $(seq 2000); do echo \"SET k$i v$i$i$i\"; echo \"GET k$i\"; done "
              "| redis-cli -p 6399 > /dev/null; redis-cli -p 6399 shutdown nosave; wait"),
}
INPUTS = {"python3-threads": {"threads.py": PY_THREADS}, "sqlite3": {"q.sql": SQL},
          "gcc": {"big.c": C_SOURCE}}
# the program each recipe needs (apt package), for a clear message when it is missing
NEEDS = {"sqlite3": "sqlite3", "gcc": "gcc", "git": "git", "sort": "sort", "perl": "perl",
         "jq": "jq", "gawk": "gawk", "node": "node", "redis": "redis-server"}


def shipped():
    """[(name, path)] of the shipped traces, by name."""
    return [(os.path.basename(p)[:-len(".trace.xz")], p)
            for p in sorted(glob.glob(os.path.join(DIR, "*.trace.xz")))]


def unpack(path, folder):
    out = os.path.join(folder, os.path.basename(path)[:-len(".xz")])
    with lzma.open(path, "rb") as f, open(out, "wb") as g:
        shutil.copyfileobj(f, g)
    return out


def header(path):
    """{pid, threads, records, dropped} from a trace file's second line."""
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        f.readline()
        words = f.readline().lstrip("# ").split()
    return {k: int(v) for k, v in zip(words[::2], words[1::2])}


def cut(src, dst, events=EVENTS):
    """`events` records of trace `src`, its header's count made theirs, into dst (.xz): the
    first ones, or in a program whose second thread starts later, from a tenth of `events`
    before that. A block allocated and not freed in the window stays live; a free of a block
    allocated before it is skipped by replay (its unmatched_frees)."""
    with open(src) as f:
        head = [next(f), next(f), next(f)]
        recs = [ln for ln in f if not ln.startswith("#")]
    second = next((i for i, ln in enumerate(recs) if ln.split()[2] != "0"), 0)
    start = max(0, min(second - events // 10, len(recs) - events))
    lines = head + recs[start:start + events]
    n = len(lines) - 3
    tids = {ln.split()[2] for ln in lines if not ln.startswith("#")}
    lines[1] = "# pid 0 threads %d records %d dropped 0\n" % (len(tids), n)
    with lzma.open(dst, "wt", preset=9 | lzma.PRESET_EXTREME) as g:
        g.writelines(lines)
    return n, len(tids)


def record_one(name, lib, dest=DIR, events=EVENTS):
    """Record recipe `name` under libhoardlab (hoard), keep the process with the most records."""
    what, cmd = RECIPES[name]
    if name in NEEDS and not shutil.which(NEEDS[name]):
        raise ToolError("traces: %s needs %s, not installed" % (name, NEEDS[name]))
    with tempfile.TemporaryDirectory(prefix="hoardlab-trace-") as tmp:
        for fname, text in INPUTS.get(name, {}).items():
            with open(os.path.join(tmp, fname), "w") as f:
                f.write(text)
        env = dict(os.environ, LD_PRELOAD=lib, HOARD_STRATEGY="hoard",
                   HOARD_TRACE=os.path.join(tmp, "t.%p.trace"))
        subprocess.run(["bash", "-c", cmd.format(python="python3")], cwd=tmp, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        found = glob.glob(os.path.join(tmp, "t.*.trace")) + \
            glob.glob(os.path.join(tmp, "r", "t.*.trace"))
        if not found:
            raise ToolError("traces: %s wrote no trace" % name)
        best = max(found, key=lambda p: header(p).get("records", 0))
        out = os.path.join(dest, name + ".trace.xz")
        n, tids = cut(best, out, events)
    log("traces: %s: %d events, %d threads, %d KiB" % (name, n, tids,
                                                       os.path.getsize(out) >> 10))
    return out


def listing():
    out = ["| trace | events | threads | KiB | what the program did |", "|---|---|---|---|---|"]
    total = 0
    for name, path in shipped():
        h = header(path)
        size = os.path.getsize(path)
        total += size
        out.append("| %s | %d | %d | %d | %s |" % (name, h.get("records", 0),
                                                h.get("threads", 0), size >> 10,
                                                RECIPES.get(name, ("?",))[0]))
    out.append("")
    out.append("%d traces, %d KiB compressed (cap %d KiB)" % (len(shipped()), total >> 10,
                                                              CAP_BYTES >> 10))
    return "\n".join(out)


def cmd_traces(a):
    if a.unpack:
        os.makedirs(a.unpack, exist_ok=True)
        for _, path in shipped():
            print(unpack(path, a.unpack))
        return 0
    if a.record is not None:
        lib = artifact(build_dir(a.build_dir), "lib")
        if not os.path.exists(lib):
            raise ToolError("traces --record: %s not built (tools/hoardlab build)" % lib)
        for name in a.record or sorted(RECIPES):
            if name not in RECIPES:
                raise ToolError("traces --record: no recipe %r; valid: %s"
                                % (name, ", ".join(sorted(RECIPES))))
            record_one(name, lib)
    print(listing())
    return 0


def add_parser(sub):
    s = sub.add_parser("traces", help="the lab's allocation traces of real programs "
                       "(harness/traces/): list, record again, unpack")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--record", nargs="*", metavar="NAME", help="record these again (default: "
                   "every recipe: %s)" % ", ".join(sorted(RECIPES)))
    g.add_argument("--unpack", metavar="DIR", help="write the traces, uncompressed, into DIR")
    s.set_defaults(func=cmd_traces)
