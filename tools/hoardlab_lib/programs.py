"""Real programs as sweep workloads: the `[program NAME]` sections of a sweep file.

A program section names a shell command; the sweep runs it under every allocator of the
sweep like an hlbench workload (the same shuffled plan, repetitions and statuses). Before
the first timed run, `prepare` runs each section's `setup` once (under glibc, in a fresh
directory: the inputs), then the command once under glibc per thread count: the reference
output every timed run is compared with, byte for byte, so an allocator that corrupts memory
shows as `mismatch` instead of winning. Each timed run starts from a fresh copy of the setup
directory.

What a run measures: harness/hlrun forks `/bin/sh -c COMMAND` (LD_PRELOAD set in that child
only), waits for it with wait4 and reports wall seconds from the fork to the exit; user and
system CPU of that process and of every descendant it waited for (the kernel adds a child's
usage to its parent's when the parent reaps it); peak RSS = ru_maxrss, the largest peak RSS
of that process and of the waited-for descendants, each alone (a maximum, not a sum of
processes that lived at the same time). Forked from the small hlrun rather than from this
Python process, whose size the kernel would carry over into the program's ru_maxrss at
exec. Under a hoardlab strategy, HOARD_STATS=<file> makes every process that exits normally
append one JSON record; the run's hoardlab.* columns are the state and peaks of the process
with the largest A (held_bytes_peak, the policy's A) and the event counters summed over every
process.

Server mode (`server = ...`): the server starts under the allocator on 127.0.0.1:{port}, a
free port; when it accepts connections, `command` (the client) runs under glibc, then
`verify`, then `stop` (default SIGTERM to the server). The run's CPU, peak RSS, exit status
and statistics are the server's; wall_s is the client's time.

Memory over time (issue 28): hlrun -i samples the measured command's process tree (the
server's in server mode) every SERIES_INTERVAL_S, summing each process's smaps_rollup; the
record's `series` holds the samples in hlbench's form (tidy.py: series.csv and the
series.* columns), with no held_bytes (hoardlab's A is per process, in the statistics).
"""
import itertools
import os
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

from .common import (LIB_DIRS, REPO, ToolError, allocator_env, allocator_kind, log, parse_bool,
                     parse_key_values, read_json_lines, require, sha256_file, split_commas,
                     stat_names)

# key: what it means (docs/tool.md has the same list; an unknown key names these).
KEYS = {
    "command": "the program: a /bin/sh -c command line run under the allocator (with server: "
               "the client, run under glibc)",
    "setup": "once per sweep before the first run, under glibc, in a fresh directory: makes "
             "the inputs (deterministically; nothing is downloaded)",
    "inputs": "files setup makes (relative to its directory): checked, sha256 in meta.json",
    "verify": "after the command, under glibc, in the same directory: its stdout is the "
              "output compared with glibc's",
    "output": "what is compared with glibc's output: stdout (default) or a file the command "
              "writes (relative to dir)",
    "dir": "working directory of command, verify and server, relative to the run's copy of "
           "the setup directory (default: that copy)",
    "needs": "executables that must be on PATH (checked before the first run)",
    "server": "a server run under the allocator, listening on 127.0.0.1:{port}",
    "stop": "stops the server (run under glibc); default: SIGTERM to the server",
    "preload_libc": "yes for a program linked with an allocator of its own (Debian's "
                    "redis-server: jemalloc): under glibc it runs with LD_PRELOAD=libc.so.6, so "
                    "that glibc's malloc is found first (default no)",
    "setup_timeout": "seconds setup may take (default 600)",
    "threads": "values of {threads} (default: the sweep's when a command uses {threads}, "
               "else 1)",
    "repetitions": "as in [sweep]",
    "timeout": "seconds per run (command, or server start to stop; verify has its own)",
    "workload_seed": "the value of {seed} in setup",
    "allocators": "a subset of the sweep's allocators",
    "knobs": "knob overrides for this program's hoardlab runs",
}
# placeholders replaced in commands (only these; other braces are left to the shell)
PLACEHOLDERS = {"threads": ("command", "verify", "server", "stop"),
                "repo": ("command", "verify", "server", "stop", "setup"),
                "port": ("command", "verify", "server", "stop"),
                "seed": ("setup",)}
# every program process sees these (HOME: nothing of the user's configuration is read)
FIXED_ENV = {"LC_ALL": "C", "TZ": "UTC"}
SETUP_TIMEOUT = 600
STOP_GRACE = 10.0           # seconds a server has to exit after stop
TAIL = 600
PRELOAD_IGNORED = "from LD_PRELOAD cannot be preloaded"


def is_program(row):
    return row.get("workload") == "program"


# --- the section ------------------------------------------------------------------------------

def section(sw, sec, w):
    """One [program LABEL] section of Sweep `sw`: a workload dict for sweep.expand(), with
    the program's spec under "program"."""
    label = sec[len("program"):].strip()
    where = "[%s]" % sec
    if not label:
        raise sw._error("[program] needs a name: [program sqlite]")
    for k in w:
        if k not in KEYS:
            raise sw._error("%s unknown key %r (valid: %s)" % (where, k, ", ".join(sorted(KEYS))))
    if not w.get("command", "").strip():
        raise sw._error("%s missing key 'command': the program to run (valid keys: %s)"
                        % (where, ", ".join(sorted(KEYS))))
    if label in [x["label"] for x in sw.workloads]:
        raise sw._error("%s: %r is already the name of another section" % (where, label))
    for key in ("command", "verify", "server", "stop", "setup"):
        for ph, allowed in PLACEHOLDERS.items():
            if key in w and "{%s}" % ph in w[key] and key not in allowed:
                raise sw._error("%s %s: {%s} is not set there (it is in: %s)"
                                % (where, key, ph, ", ".join(allowed)))
    server = w.get("server", "").strip() or None
    if server and "{port}" not in server:
        raise sw._error("%s server: must listen on {port} (a free port on 127.0.0.1)" % where)
    if not server:
        for key in ("command", "verify", "stop"):
            if "{port}" in w.get(key, ""):
                raise sw._error("%s %s: {port} is only set with server" % (where, key))
        if "stop" in w:
            raise sw._error("%s stop: only with server" % where)
    if "verify" in w and "output" in w:
        raise sw._error("%s output and verify: choose one (verify's stdout is the output)"
                        % where)
    for key in ("dir", "output"):
        v = w.get(key, "").strip()
        if v and (os.path.isabs(v) or ".." in v.split("/")):
            raise sw._error("%s %s: %r must be a path inside the run directory" % (where, key, v))
    settings = sw._settings({k: w[k] for k in ("threads", "repetitions", "timeout",
                                               "workload_seed") if k in w},
                            where, inherited=sw.settings)
    uses_threads = any("{threads}" in w.get(k, "") for k in ("command", "server"))
    if not uses_threads:
        if "threads" in w and settings["threads"] != [1]:
            raise sw._error("%s threads: neither command nor server uses {threads}" % where)
        settings["threads"] = [1]
    try:
        setup_timeout = float(w.get("setup_timeout", SETUP_TIMEOUT))
        if setup_timeout <= 0:
            raise ValueError
    except ValueError:
        raise sw._error("%s setup_timeout: %r is not a positive number of seconds"
                        % (where, w["setup_timeout"]))
    preload_libc = parse_bool(w.get("preload_libc", "no"), "%s: %s preload_libc"
                              % (sw.path, where))
    spec = {"label": label, "command": w["command"].strip(),
            "setup": w.get("setup", "").strip() or None,
            "inputs": split_commas(w.get("inputs", "")),
            "verify": w.get("verify", "").strip() or None,
            "output": w.get("output", "").strip() or "stdout",
            "dir": w.get("dir", "").strip() or ".",
            "needs": [n for n in w.get("needs", "").replace(",", " ").split() if n],
            "server": server, "stop": w.get("stop", "").strip() or None,
            "setup_timeout": setup_timeout, "seed": settings["workload_seed"],
            "preload_libc": preload_libc}
    wl = {"label": label, "workload": "program", "program": spec, "params": {}, "section": sec}
    wl.update(settings)
    wl["knobs"] = parse_key_values(w.get("knobs", ""), where + " knobs")
    wl["allocators"] = sw._allocator_subset(w["allocators"], where) if "allocators" in w \
        else None
    return wl


def fill(cmd, threads=None, port=None, seed=None):
    """The command with its placeholders replaced; other braces are left alone."""
    for ph, v in (("threads", threads), ("port", port), ("seed", seed),
                  ("repo", shlex.quote(REPO))):
        if v is not None:
            cmd = cmd.replace("{%s}" % ph, str(v))
    return cmd


# --- processes --------------------------------------------------------------------------------

SERIES_INTERVAL_S = 0.05        # hlrun -i: a sample of the process tree's memory this often

class Proc:
    """`/bin/sh -c CMD` started by hlrun (harness/hlrun.c) in a session (process group) of
    its own, stdin from /dev/null, stdout and stderr to files. LD_PRELOAD of `env` is set by
    hlrun in the command's process only. wait() waits for the exit (killing the group at the
    deadline), kills what is left of the group and reaps hlrun; then code is the command's
    exit code (negative: killed by that signal), wall its seconds, utime, stime and
    maxrss_kb what wait4 reported of it (hlrun's numbers, not hlrun's own). With `sample`,
    hlrun samples the process tree's memory every SERIES_INTERVAL_S: series() is then the
    record's `series`."""

    def __init__(self, cmd, cwd, env, out, err, hlrun, sample=False):
        self.out, self.err, self.ru_path = out, err, out + ".rusage"
        self.timed_out = False
        self.code = self.wall = self.utime = self.stime = self.maxrss_kb = None
        self.samples = []
        env = dict(env)
        preload = env.pop("LD_PRELOAD", None)
        argv = [hlrun] + (["-p", preload] if preload else []) + \
            (["-i", str(SERIES_INTERVAL_S)] if sample else []) + \
            ["-o", self.ru_path, "--", "/bin/sh", "-c", cmd]
        with open(out, "wb") as fo, open(err, "wb") as fe:
            self.t0 = time.perf_counter()
            self.p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                      stdout=fo, stderr=fe, start_new_session=True)
        self.pid = self.p.pid

    def exited(self):
        return self.code is not None or os.waitid(
            os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None

    def kill(self):
        """SIGKILL to the whole process group."""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def signal(self, sig):
        """`sig` to the command (hlrun passes it on)."""
        try:
            os.kill(self.pid, sig)
        except ProcessLookupError:
            pass

    def _expire(self):
        if not self.exited():
            self.timed_out = True
            self.kill()

    def wait(self, deadline):
        if self.code is not None:
            return self
        timer = threading.Timer(max(0.0, deadline - time.perf_counter()), self._expire)
        timer.start()
        try:
            os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)   # exited, not yet reaped
            self.wall = time.perf_counter() - self.t0
        finally:
            timer.cancel()
            # hlrun is a zombie until reaped, so its group id is still ours: kill what the
            # command left running (a daemon of its own making), then reap hlrun.
            self.kill()
            _, status, _ = os.wait4(self.pid, 0)
            self.p.returncode = os.waitstatus_to_exitcode(status)
        self.code = self.p.returncode if self.p.returncode else 127
        try:
            with open(self.ru_path) as f:
                first, *more = f.read().splitlines() or [""]
            ru = dict(kv.split("=", 1) for kv in first.split() if "=" in kv)
            self.samples = [dict(kv.split("=", 1) for kv in ln.split()[1:] if "=" in kv)
                            for ln in more if ln.startswith("series ")]
            raw = int(ru["status"])
            if raw >= 0:
                self.code = os.waitstatus_to_exitcode(raw)
                self.wall = int(ru["wall_ns"]) / 1e9
                self.utime = int(ru["utime_us"]) / 1e6
                self.stime = int(ru["stime_us"]) / 1e6
                self.maxrss_kb = int(ru["maxrss_kb"])
        except (OSError, KeyError, ValueError):
            pass            # killed (timeout) or hlrun failed: no numbers
        return self

    def stderr_text(self):
        return _head_tail(self.err)

    def series(self):
        """hlrun's samples as a record's `series` (columns in hlrun's order; `null` -> None),
        or None without samples."""
        if not self.samples:
            return None
        cols = list(self.samples[0])
        return {"interval_s": SERIES_INTERVAL_S, "columns": cols,
                "rows": [[_number(smp.get(c)) for c in cols] for smp in self.samples]}


def _number(text):
    """A value of an hlrun series line: int, float (with a '.'), or None for null."""
    if text in (None, "null"):
        return None
    return float(text) if "." in text else int(text)


def _head_tail(path, n=65536):
    """The start (where ld.so complains) and the end of a file, as text."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(n)
            if size > 2 * n:
                f.seek(size - n)
                head += b"\n...\n" + f.read()
            elif size > n:
                head += f.read()
        return head.decode(errors="replace")
    except OSError:
        return ""


def _exit_text(code):
    if code < 0:
        try:
            return "killed by %s" % signal.Signals(-code).name
        except ValueError:
            return "killed by signal %d" % -code
    return "exit status %d" % code


def free_port():
    """A port on 127.0.0.1 that was free a moment ago (the server binds it next)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


def first_difference(got, ref):
    """Where two files first differ, as a phrase."""
    with open(got, "rb") as a, open(ref, "rb") as b:
        for n, (x, y) in enumerate(itertools.zip_longest(a, b), 1):
            if x != y:
                def show(s):
                    return "end of output" if s is None else repr(s[:80])[1:]
                return "first at line %d: got %s, glibc %s" % (n, show(x), show(y))
    return "identical"


# --- statistics -------------------------------------------------------------------------------

def read_stats(path):
    """The HOARD_STATS records (one JSON object a line, one per process)."""
    return read_json_lines(path)


def aggregate_stats(recs, bdir=None):
    """One hoardlab dict for the run, each statistic combined as its `across` in the build's
    table (hlconfig --stats) says: `largest` from the largest process (by held_bytes_peak, A;
    its state and peaks), `sum` (event counters) summed over every process, `max` (threads) the
    most of any process; fragmentation = A/U of the largest process (fragmentation_os: with
    all its memory)."""
    if not recs:
        return None
    big = max(recs, key=lambda r: r.get("held_bytes_peak") or 0)
    out = {k: v for k, v in big.items() if k not in ("strategy", "pid")}
    for k in stat_names(bdir, "sum"):
        vals = [r.get(k) for r in recs if isinstance(r.get(k), (int, float))]
        if vals:
            out[k] = sum(vals)
    for k in stat_names(bdir, "max"):
        out[k] = max((r.get(k) or 0) for r in recs)
    u = big.get("in_use_peak")
    for ratio, a in (("fragmentation", "held_bytes_peak"), ("fragmentation_os", "os_bytes_peak")):
        out[ratio] = round(big[a] / u, 4) if big.get(a) and u else None
    return out


# --- a run ----------------------------------------------------------------------------------

def _env(base, knobs, bdir, home, stats=None):
    env = allocator_env(base, knobs, bdir)
    env.update(FIXED_ENV, HOME=home)
    if stats:
        env["HOARD_STATS"] = stats
    return env


def libc_path():
    """The C library's file, for preload_libc."""
    for d in LIB_DIRS:
        p = os.path.join(d, "libc.so.6")
        if os.path.exists(p):
            return p
    raise ToolError("preload_libc: libc.so.6 not found in %s" % ", ".join(LIB_DIRS))


def _new_result(env):
    return {"argv": [], "started_at": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
            "records": [], "exit_code": None, "error": "", "status": "ok",
            "env": {k: v for k, v in env.items() if k.startswith("HOARD_") or
                    k == "LD_PRELOAD"}}


def _fail(res, status, msg, stderr=""):
    res["status"] = status
    res["error"] = (msg + (": " + stderr.strip()[-TAIL:] if stderr.strip() else ""))[-TAIL:]
    return res


def execute(spec, base, knobs, threads, bdir, scratch, work, timeout, reference=None):
    """One run of program `spec` under allocator `base` in directory `work` (a copy of the
    setup directory); scratch holds its stdout, stderr and statistics. reference: the glibc
    output's {"path", "sha256", "bytes"}, or None for the reference run itself. Returns
    (result in runner.run_one's form, path of the output compared or None)."""
    cwd = os.path.join(work, spec["dir"])
    hlrun = require(bdir, "hlrun")
    stats = os.path.join(scratch, "stats.jsonl") if allocator_kind(base) == "hoardlab" \
        else None
    env = _env(base, knobs, bdir, work, stats)
    if spec["preload_libc"] and not env.get("LD_PRELOAD"):
        env["LD_PRELOAD"] = libc_path()
    plain = _env("glibc", {}, bdir, work)
    res = _new_result(env)
    deadline = time.perf_counter() + timeout
    port = free_port() if spec["server"] else None
    sub = dict(threads=threads, port=port)
    info = {}
    if spec["server"]:
        main = _serve(spec, sub, cwd, env, plain, scratch, deadline, res, info, hlrun)
    else:
        res["argv"] = ["/bin/sh", "-c", fill(spec["command"], **sub)]
        main = Proc(res["argv"][2], cwd, env, os.path.join(scratch, "stdout"),
                    os.path.join(scratch, "stderr"), hlrun, sample=True).wait(deadline)
        info["wall_s"] = main.wall
        if main.timed_out:
            _fail(res, "timeout", "timed out after %gs" % timeout, main.stderr_text())
    if res["status"] != "ok":
        return res, None
    res["exit_code"] = main.code
    err = main.stderr_text()
    if env.get("LD_PRELOAD") and PRELOAD_IGNORED in err:
        line = next(ln for ln in err.splitlines() if PRELOAD_IGNORED in ln)
        return _fail(res, "not-loaded", "the allocator was not loaded: " + line.strip()), None
    if main.code != 0:
        return _fail(res, "failed", _exit_text(main.code), err), None
    if "server_error" in info:
        return _fail(res, "failed", info["server_error"]), None
    # the output compared
    if spec["verify"]:
        v = info["verify"] if spec["server"] else \
            Proc(fill(spec["verify"], **sub), cwd, plain, os.path.join(scratch, "verify.out"),
                 os.path.join(scratch, "verify.err"), hlrun).wait(time.perf_counter() + timeout)
        if v.timed_out or v.code != 0:
            what = "timed out after %gs" % timeout if v.timed_out else _exit_text(v.code)
            return _fail(res, "mismatch", "verify command %s" % what, v.stderr_text()), None
        out, what = v.out, "verify's stdout"
    elif spec["output"] == "stdout":
        out, what = main.out, "stdout"
    else:
        out, what = os.path.join(cwd, spec["output"]), spec["output"]
        if not os.path.isfile(out):
            return _fail(res, "mismatch", "output file %s missing" % spec["output"]), None
    digest, size = sha256_file(out), os.path.getsize(out)
    prog = {"user_s": round(main.utime, 4), "sys_s": round(main.stime, 4),
            "output_sha256": digest, "output_bytes": size}
    if spec["server"]:
        prog.update(server_s=round(main.wall, 4), port=port)
    rec = {"schema": None, "strategy": None, "wall_s": round(info["wall_s"], 4),
           "peak_rss_kb": main.maxrss_kb, "hoardlab": None, "program": prog}
    if main.series():
        rec["series"] = main.series()
    if stats:
        recs = read_stats(stats)
        prog["processes"] = len(recs)
        found = sorted({str(r.get("strategy")) for r in recs})
        if not recs:
            return _fail(res, "not-loaded", "no HOARD_STATS record: libhoardlab.so was not "
                         "loaded in any process that exited normally"), None
        if found != [base]:
            return _fail(res, "not-loaded", "HOARD_STATS records name strategy %s, expected "
                         "%s" % (", ".join(found), base)), None
        rec["strategy"] = base
        rec["hoardlab"] = aggregate_stats(recs, bdir)
    res["records"] = [rec]
    if reference is not None and digest != reference["sha256"]:
        _fail(res, "mismatch", "%s differs from glibc's (%d bytes, glibc %d; %s)"
              % (what, size, reference["bytes"], first_difference(out, reference["path"])))
    return res, out


def _serve(spec, sub, cwd, env, plain, scratch, deadline, res, info, hlrun):
    """Server mode: start the server under the allocator, wait until it listens, run the
    client and verify under glibc, stop the server and wait for it. Returns the server's
    Proc; res carries a timeout, info["server_error"] any other failure, info["verify"] the
    verify Proc."""
    port = sub["port"]
    cmd = fill(spec["server"], **sub)
    res["argv"] = ["/bin/sh", "-c", cmd]
    srv = Proc(cmd, cwd, env, os.path.join(scratch, "server.out"),
               os.path.join(scratch, "stderr"), hlrun, sample=True)
    try:
        while not _listening(port):
            if srv.exited():
                info["server_error"] = "the server exited before listening on 127.0.0.1:%d" \
                    % port
                return srv.wait(deadline)
            if time.perf_counter() > deadline:
                _fail(res, "timeout", "the server did not listen on 127.0.0.1:%d within the "
                      "timeout" % port, srv.stderr_text())
                return srv.wait(deadline)
            time.sleep(0.01)
        client = Proc(fill(spec["command"], **sub), cwd, plain, os.path.join(scratch, "stdout"),
                      os.path.join(scratch, "client.err"), hlrun).wait(deadline)
        info["wall_s"] = client.wall
        if client.timed_out:
            _fail(res, "timeout", "the client timed out", client.stderr_text())
            return srv.wait(0)
        if client.code != 0:
            info["server_error"] = "the client failed (%s): %s" % (
                _exit_text(client.code), client.stderr_text().strip()[-TAIL:])
        elif spec["verify"]:
            info["verify"] = Proc(fill(spec["verify"], **sub), cwd, plain,
                                  os.path.join(scratch, "verify.out"),
                                  os.path.join(scratch, "verify.err"), hlrun).wait(deadline)
        if spec["stop"]:
            Proc(fill(spec["stop"], **sub), cwd, plain, os.path.join(scratch, "stop.out"),
                 os.path.join(scratch, "stop.err"), hlrun).wait(time.perf_counter() + STOP_GRACE)
        else:
            srv.signal(signal.SIGTERM)
        srv.wait(time.perf_counter() + STOP_GRACE)
        if srv.timed_out:
            info["server_error"] = "the server did not exit within %gs of being stopped" \
                % STOP_GRACE
        elif srv.code == -signal.SIGTERM and not spec["stop"]:
            srv.code = 0        # it did what SIGTERM asks, without an exit of its own
        return srv
    finally:
        if srv.code is None:
            srv.wait(0)


# --- a sweep's programs: setup and references before the first run, then each run ------------

class Prepared:
    """The scratch directory of a sweep's programs (setup directories, glibc's reference
    outputs, one directory per run while it runs) and what meta.json records of them."""

    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="hoardlab-programs-")
        self.meta = {}

    def cleanup(self):
        shutil.rmtree(self.root, ignore_errors=True)


def specs_of(runs):
    """{label: [spec, thread counts, timeout]} of the program runs, in plan order."""
    specs = {}
    for r in runs:
        spec = r.get("program")
        if spec:
            e = specs.setdefault(spec["label"], [spec, set(), r["timeout"]])
            e[1].add(r["threads"])
    return specs


def check_needs(specs):
    for label, (spec, _, _) in specs.items():
        for exe in spec["needs"]:
            if not shutil.which(exe):
                raise ToolError("[program %s] needs %s, which is not on PATH: tools/install-deps "
                                "installs the Debian packages of tools/packages/programs.txt"
                                % (label, exe))


def versions(exes):
    """{executable: {path, package, version}} from dpkg, where it knows the file."""
    out = {}
    for exe in exes:
        path = shutil.which(exe)
        e = {"path": path}
        try:
            p = subprocess.run(["dpkg-query", "-S", os.path.realpath(path)], capture_output=True,
                               text=True, timeout=30)
            if p.returncode == 0:
                pkg = p.stdout.split(":")[0].strip()
                v = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg],
                                   capture_output=True, text=True, timeout=30)
                e.update(package=pkg, version=v.stdout.strip() or None)
        except (OSError, subprocess.SubprocessError, TypeError):
            pass
        out[exe] = e
    return out


def prepare(runs, bdir, quiet=False):
    """Before the first timed run: check every program's `needs`, run each setup once and
    each command once under glibc per thread count (the reference outputs). A failure stops
    the sweep (ToolError, exit status 2). Returns a Prepared (None without program runs)."""
    specs = specs_of(runs)
    if not specs:
        return None
    check_needs(specs)
    prep = Prepared()
    try:
        for label, (spec, threads, timeout) in specs.items():
            prep.meta[label] = _prepare_one(spec, sorted(threads), timeout, bdir, prep.root,
                                            quiet)
    except BaseException:
        prep.cleanup()
        raise
    return prep


def _safe(label):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in label)


def _prepare_one(spec, threads, timeout, bdir, root, quiet):
    label = spec["label"]
    where = "[program %s]" % label
    d = os.path.join(root, "setup-" + _safe(label))
    os.makedirs(d)
    m = {k: spec[k] for k in ("command", "setup", "inputs", "verify", "output", "dir",
                              "server", "stop")}
    m["seed"] = spec["seed"]
    m["programs"] = versions(spec["needs"])
    msg = []
    if spec["setup"]:
        scratch = tempfile.mkdtemp(dir=root, prefix="setup-out-")
        p = Proc(fill(spec["setup"], seed=spec["seed"]), d, _env("glibc", {}, bdir, d),
                 os.path.join(scratch, "stdout"), os.path.join(scratch, "stderr"),
                 require(bdir, "hlrun"))
        p.wait(time.perf_counter() + spec["setup_timeout"])
        if p.timed_out or p.code != 0:
            raise ToolError("%s setup %s: %s" % (
                where, "timed out after %gs" % spec["setup_timeout"] if p.timed_out
                else "failed (%s)" % _exit_text(p.code), p.stderr_text().strip()[-TAIL:]))
        m["setup_s"] = round(p.wall, 2)
        msg.append("setup %.1f s" % p.wall)
    m["inputs"] = {}
    for f in spec["inputs"]:
        path = os.path.join(d, f)
        if not os.path.isfile(path):
            raise ToolError("%s inputs: setup did not make %s" % (where, f))
        m["inputs"][f] = sha256_file(path)
    if not os.path.isdir(os.path.join(d, spec["dir"])):
        raise ToolError("%s dir: %s does not exist after setup" % (where, spec["dir"]))
    spec["_root"], spec["_setup_dir"], spec["_refs"] = root, d, {}
    m["reference"] = {}
    for t in threads:
        keep = os.path.join(root, "reference-%s-t%d.out" % (_safe(label), t))
        res = run_in_copy(spec, "glibc", {}, t, bdir, timeout, keep=keep)
        if res["status"] != "ok":
            raise ToolError("%s under glibc (the reference output, before the first run), "
                            "threads=%d: %s: %s" % (where, t, res["status"],
                                                    res["error"].replace("\n", " | ")))
        rec = res["records"][0]
        digest, size = rec["program"]["output_sha256"], rec["program"]["output_bytes"]
        spec["_refs"][t] = {"path": keep, "sha256": digest, "bytes": size}
        m["reference"][str(t)] = {"sha256": digest, "bytes": size, "wall_s": rec["wall_s"],
                                  "peak_rss_kb": rec["peak_rss_kb"]}
        msg.append("glibc reference t=%d %.1f s" % (t, rec["wall_s"]))
    if not quiet:
        log("program %s: %s" % (label, ", ".join(msg)))
    return m


def run_in_copy(spec, base, knobs, threads, bdir, timeout, reference=None, keep=None):
    """execute() in a fresh copy of the setup directory, removed afterwards; keep: where to
    copy the output compared (the reference run)."""
    scratch = tempfile.mkdtemp(dir=spec["_root"], prefix="run-")
    try:
        work = os.path.join(scratch, "work")
        shutil.copytree(spec["_setup_dir"], work, symlinks=True)
        t0 = time.time()
        res, out = execute(spec, base, knobs, threads, bdir, scratch, work, timeout, reference)
        res["elapsed_s"] = round(time.time() - t0, 4)
        if keep and out:
            shutil.copyfile(out, keep)
        return res
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run_one(run, bdir):
    """A program run of the sweep plan (runner.run_one hands it here)."""
    spec = run["program"]
    if "_refs" not in spec:
        raise ToolError("[program %s]: not prepared (programs.prepare runs the setup and the "
                        "glibc reference before the first run)" % spec["label"])
    return run_in_copy(spec, run["base"], run["knobs"], run["threads"], bdir, run["timeout"],
                       reference=spec["_refs"][run["threads"]])
