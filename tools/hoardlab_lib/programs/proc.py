"""A program's processes under harness/hlrun (its wall time, CPU, peak RSS, memory over
time), a free port for a server, and the hoardlab statistics its processes append."""
import itertools
import os
import signal
import socket
import subprocess
import threading
import time

from ..common import read_json_lines, stat_names


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


def exit_text(code):
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


def listening(port):
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
