"""Real programs as sweep workloads ([program NAME] sections, tools/hoardlab_lib/programs/):
parsing and its errors, the shipped suite, a tiny sweep of synthetic programs through
tools/hoardlab (one that succeeds, one that fails, one that times out, one whose output
differs from glibc's), the launcher's RSS, the report's tables, and a short redis run that
starts and stops a server on 127.0.0.1. About 15 s."""
import csv
import os
import socket
import subprocess
import sys
import time

import pytest

from conftest import REPO
from hoardlab_lib import programs
from hoardlab_lib.runkit import tidy
from hoardlab_lib.report import programs as report_programs
from hoardlab_lib.common import ToolError
from hoardlab_lib.sweeps import Sweep

BDIR = os.path.abspath(os.environ.get("HOARDLAB_BUILD_DIR") or os.path.join(REPO, "build"))
TOOL = os.path.join(REPO, "tools", "hoardlab")
STRATS = ["serial", "concurrent", "private", "ownership", "hoard", "hoard2026", "hoard202607", "lockfree"]
built = pytest.mark.skipif(
    not all(os.path.exists(os.path.join(BDIR, p)) for p in
            ("harness/hlrun", "harness/hlbench", "src/hlconfig", "src/libhoardlab.so")),
    reason="hlrun/hlbench/hlconfig/libhoardlab.so not built in %s (run tools/hoardlab build)"
    % BDIR)

HEAD = "[sweep]\nstrategies = hoard\nthreads = 1, 2\n[allocators]\nglibc = glibc\n"


def sweep(text, path="p.ini"):
    return Sweep(text, path, ncores=2, strategies=STRATS)


def tool(*args, timeout=120):
    env = dict(os.environ, HOARDLAB_BUILD_DIR=BDIR)
    return subprocess.run([sys.executable, TOOL] + list(args), capture_output=True, text=True,
                          env=env, timeout=timeout)


# --- parsing -------------------------------------------------------------------------------

def test_section_expands_like_a_workload():
    s = sweep(HEAD + "[program a]\ncommand = xz -T{threads} -c x\nrepetitions = 2\n"
              "[program b]\ncommand = sort x\nsetup = seq 9 > x\ninputs = x\n"
              "[workload threadtest]\nthreads = 1\n")
    runs = s.expand()
    a = [r for r in runs if r["workload_label"] == "a"]
    b = [r for r in runs if r["workload_label"] == "b"]
    assert len(a) == 2 * 2 * 2 and {r["threads"] for r in a} == {1, 2}   # uses {threads}
    assert len(b) == 2 and {r["threads"] for r in b} == {1}              # does not: once
    assert all(r["workload"] == "program" and r["program"]["label"] == r["workload_label"]
               for r in a + b)
    assert b[0]["program"]["inputs"] == ["x"] and b[0]["program"]["output"] == "stdout"
    assert not any("program" in r for r in runs if r["workload"] == "threadtest")


@pytest.mark.parametrize("section,msg", [
    ("[program x]\ncommand = true\nfoo = 1\n",
     "p.ini: [program x] unknown key 'foo' (valid: allocators, command, dir,"),
    ("[program x]\nsetup = true\n", "p.ini: [program x] missing key 'command'"),
    ("[program x]\ncommand = true\nthreads = 1, 2\n", "neither command nor server uses"),
    ("[program x]\ncommand = nc localhost {port}\n", "{port} is only set with server"),
    ("[program x]\nserver = redis-server\ncommand = true\n", "must listen on {port}"),
    ("[program x]\ncommand = true\noutput = o\nverify = cat o\n", "choose one"),
    ("[program x]\ncommand = true\ndir = ../up\n", "inside the run directory"),
    ("[program x]\ncommand = true\nallocators = jemalloc\n", "not an allocator"),
    ("[program x]\ncommand = true\npreload_libc = maybe\n", "is not on/off"),
    ("[program]\ncommand = true\n", "[program] needs a name"),
])
def test_bad_sections(section, msg):
    with pytest.raises(ToolError) as e:
        sweep(HEAD + section)
    assert msg in str(e.value)
    assert "\n" not in str(e.value)


def test_bad_section_is_one_line_and_exit_2(tmp_path):
    p = tmp_path / "bad.ini"
    p.write_text(HEAD + "[program x]\ncommand = true\ncomand = typo\n")
    r = tool("sweep", "--no-build", "--dry-run", str(p))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "[program x] unknown key 'comand'" in lines[0], r.stderr
    assert str(p) in lines[0] and "command" in lines[0]


def test_shipped_suite():
    path = os.path.join(REPO, "configs", "sweeps", "programs.ini")
    with open(path) as f:
        s = Sweep(f.read(), path, ncores=2, strategies=STRATS)
    progs = [w for w in s.workloads if w.get("program")]
    assert len(progs) >= 8
    labels = {w["label"] for w in progs}
    assert {"python3", "perl", "sqlite3", "g++", "xz", "git", "redis"} <= labels
    assert {a[0] for a in s.allocators} >= set(STRATS) | {
        "glibc", "jemalloc", "mimalloc", "mimalloc3", "tcmalloc"}
    threaded = [w["label"] for w in progs if "{threads}" in w["program"]["command"]]
    assert "xz" in threaded and all(len(w["threads"]) == 2 for w in progs
                                    if w["label"] in threaded)
    redis = next(w["program"] for w in progs if w["label"] == "redis")
    assert "127.0.0.1" in redis["server"] and "redis-benchmark" in redis["command"]
    with open(os.path.join(REPO, "tools", "packages", "programs.txt")) as f:
        pkgs = {ln.strip() for ln in f if ln.strip() and not ln.startswith("#")}
    assert {"redis-server", "redis-tools", "sqlite3", "g++", "xz-utils", "git"} <= pkgs
    for w in progs:
        assert w["program"]["needs"], w["label"]


# --- pieces ---------------------------------------------------------------------------------

def test_aggregate_stats():
    recs = [{"strategy": "hoard", "pid": 1, "mallocs": 10, "lock_acquisitions": 5,
             "held_bytes_peak": 90, "os_bytes_peak": 100, "in_use_peak": 50, "threads": 1,
             "in_use": 7},
            {"strategy": "hoard", "pid": 2, "mallocs": 30, "lock_acquisitions": 1,
             "held_bytes_peak": 360, "os_bytes_peak": 400, "in_use_peak": 300, "threads": 3,
             "in_use": 9}]
    a = programs.aggregate_stats(recs)
    assert a["mallocs"] == 40 and a["lock_acquisitions"] == 6      # summed
    assert a["os_bytes_peak"] == 400 and a["in_use"] == 9          # the largest process
    assert a["threads"] == 3 and a["fragmentation"] == pytest.approx(360 / 300, abs=1e-3)
    assert a["fragmentation_os"] == pytest.approx(400 / 300, abs=1e-3)
    assert programs.aggregate_stats([]) is None


@built
def test_launcher_rss_is_the_programs_own(tmp_path):
    """A child forked from this (large) process would inherit its size as ru_maxrss at exec;
    hlrun forks the program from a small process instead."""
    ballast = bytearray(300 << 20)
    ballast[::4096] = b"x" * len(ballast[::4096])
    p = programs.Proc("exec /bin/true", str(tmp_path), dict(os.environ), str(tmp_path / "o"),
                      str(tmp_path / "e"), os.path.join(BDIR, "harness", "hlrun"))
    p.wait(time.perf_counter() + 60)
    assert p.code == 0 and p.maxrss_kb < 64 << 10, p.maxrss_kb
    del ballast


# --- a tiny sweep through the tool ------------------------------------------------------------

TINY = """
[sweep]
name = programs-tiny
strategies = hoard
threads = 1, 2
repetitions = 1
timeout = 20
[allocators]
glibc = glibc
[program ok]
setup = seq 1 20000 | awk '{print ($1 * 7919) % 10007}' > in.txt
inputs = in.txt
command = sort -n in.txt | uniq -c | sort -rn | head -5
[program fails]
command = [ -z "$LD_PRELOAD" ] || exit 3; seq 3
[program slow]
command = [ -z "$LD_PRELOAD" ] || sleep 30; seq 3
timeout = 1
[program differs]
command = printenv HOARD_STRATEGY || echo none
[program threads]
command = seq {threads} | sort -r
[program file]
command = seq 50 | sort > out.txt
output = out.txt
[program verified]
command = seq 50 | sort > out.txt
verify = wc -l out.txt
"""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("programs")
    (d / "tiny.ini").write_text(TINY)
    out = str(d / "out")
    r = tool("sweep", "--no-build", str(d / "tiny.ini"), "--out", out, "--seed", "3")
    assert r.returncode == 1, r.stderr[-2000:]     # its failing programs: non-zero
    with open(os.path.join(out, "runs.csv")) as f:
        rows = list(csv.DictReader(f))
    return out, {(r["allocator"], r["workload_label"], r["threads"]): r for r in rows}


@built
def test_tiny_statuses(tiny):
    _, rows = tiny
    st = {k: r["status"] for k, r in rows.items()}
    assert len(st) == 2 * 8            # 7 programs, `threads` twice; glibc and hoard
    assert all(v == "ok" for (a, _, _), v in st.items() if a == "glibc"), st
    assert st[("hoard", "ok", "1")] == "ok"
    assert st[("hoard", "fails", "1")] == "failed"
    assert rows[("hoard", "fails", "1")]["exit_code"] == "3"
    assert st[("hoard", "slow", "1")] == "timeout"
    assert st[("hoard", "differs", "1")] == "mismatch"
    assert "differs from glibc's" in rows[("hoard", "differs", "1")]["error"]
    for k in (("hoard", "threads", "1"), ("hoard", "threads", "2"), ("hoard", "file", "1"),
              ("hoard", "verified", "1")):
        assert st[k] == "ok", (k, rows[k]["error"])


@built
def test_tiny_measurements(tiny):
    _, rows = tiny
    ok = rows[("hoard", "ok", "1")]
    assert float(ok["wall_s"]) > 0 and int(ok["peak_rss_kb"]) > 0
    assert float(ok["program.user_s"]) >= 0 and float(ok["program.sys_s"]) >= 0
    assert ok["program.output_sha256"] == rows[("glibc", "ok", "1")]["program.output_sha256"]
    assert int(ok["program.processes"]) >= 3        # sort, uniq, sort, head: exit normally
    assert int(ok["hoardlab.held_bytes_peak"]) > 0 and int(ok["hoardlab.mallocs"]) > 0
    assert ok["reported_strategy"] == "hoard" and ok["preload"].endswith("libhoardlab.so")
    assert rows[("glibc", "ok", "1")]["hoardlab.mallocs"] == ""
    t1, t2 = rows[("hoard", "threads", "1")], rows[("hoard", "threads", "2")]
    assert t1["program.output_sha256"] != t2["program.output_sha256"]   # {threads}: its own
    assert rows[("hoard", "fails", "1")]["wall_s"] == ""                # no metrics


@built
def test_tiny_report(tiny):
    out, _ = tiny
    with open(os.path.join(out, "report.md")) as f:
        rep = f.read()
    assert "## Real programs" in rep and "### Time relative to glibc" in rep
    sec = rep[rep.index("### Time relative to glibc"):rep.index("### Peak RSS")]
    for status in ("**failed**", "**timeout**", "**mismatch**"):
        assert status in sec
    assert "Left out of the geometric mean: hoard on fails (failed); hoard on slow " \
        "(timeout); hoard on differs (mismatch)." in sec
    assert "**1.00** (5 of 8)" not in sec and "(5 of 8)" in sec
    assert "## Taxonomy" not in rep             # no hlbench runs: no hlbench sections
    assert os.path.exists(os.path.join(out, "programs.png"))
    import json
    with open(os.path.join(out, "meta.json")) as f:
        meta = json.load(f)
    assert set(meta["programs"]["ok"]["inputs"]) == {"in.txt"}
    assert set(meta["programs"]["threads"]["reference"]) == {"1", "2"}


def test_report_geomean_excludes_bad_cells():
    def row(v, lab, wall, rss, status="ok"):
        return {"variant": v, "workload_label": lab, "workload": "program", "threads": 1,
                "status": status, "wall_s": wall, "peak_rss_kb": rss, "alloc_kind": "x"}
    rows = [row("glibc", "a", 2.0, 100), row("glibc", "b", 1.0, 100),
            row("x", "a", 1.0, 50), row("x", "b", 4.0, 400), row("x", "b", None, None,
                                                                 "timeout")]
    text = "\n".join(report_programs.programs_section(rows))
    assert "| a | 2.00 ±? | 0.50 ±? |" in text
    assert "| b | 1.00 ±? | **timeout 1/2** |" in text
    assert "**0.50** (1 of 2)" in text and "x on b (timeout 1/2)" in text


# --- a server ---------------------------------------------------------------------------------

def _shipped(label):
    path = os.path.join(REPO, "configs", "sweeps", "programs.ini")
    with open(path) as f:
        s = Sweep(f.read(), path, ncores=2, strategies=STRATS)
    return next(w["program"] for w in s.workloads if w["label"] == label)


@built
def test_redis_server_starts_and_stops_on_localhost():
    """The shipped redis section's server line, a short benchmark, and a verify that asks the
    server how it was started: only the server runs under the allocator, and it is gone
    afterwards."""
    red = _shipped("redis")
    text = ("[sweep]\nstrategies = hoard\n[allocators]\nglibc = glibc\n[program redis]\n"
            "needs = redis-server, redis-benchmark, redis-cli\npreload_libc = yes\n"
            "server = %s\n"
            "command = redis-benchmark -h 127.0.0.1 -p {port} -q -n 2000 -t set,get,lpush\n"
            "verify = redis-cli -h 127.0.0.1 -p {port} CONFIG GET bind && "
            "redis-cli -h 127.0.0.1 -p {port} CONFIG GET save && "
            "redis-cli -h 127.0.0.1 -p {port} CONFIG GET appendonly\n" % red["server"])
    s = sweep(text)
    runs = s.expand()
    prep = programs.prepare(runs, BDIR, quiet=True)
    try:
        spec = runs[0]["program"]
        with open(spec["_refs"][1]["path"]) as f:
            said = f.read().split()
        assert said == ["bind", "127.0.0.1", "save", "appendonly", "no"], said
        run = next(r for r in runs if r["allocator"] == "hoard")
        res = programs.run_one(run, BDIR)
        assert res["status"] == "ok", res["error"]
        prog = res["records"][0]["program"]
        assert prog["processes"] == 1            # the server; the clients ran under glibc
        assert res["records"][0]["hoardlab"]["mallocs"] > 0
        assert res["records"][0]["peak_rss_kb"] > 0 and prog["server_s"] > 0
        with socket.socket() as sock:            # stopped: nothing listens on its port now
            assert sock.connect_ex(("127.0.0.1", prog["port"])) != 0
        rows, _ = tidy.rows_for(run, res, "t", 0)
        assert rows[0]["status"] == "ok" and rows[0]["program.port"] == prog["port"]
    finally:
        prep.cleanup()
    assert not os.path.exists(prep.root)
