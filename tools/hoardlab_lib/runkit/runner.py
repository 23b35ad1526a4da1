"""Running one hlbench process under one allocator, and a whole sweep with progress.

Every child runs in a process group of its own, which is ended whole (stop) when its run
times out or the tool is interrupted: SIGINT, or SIGTERM made into the same interruption
by `interruptible` (grade, test --strategy, run), so no benchmark is left spinning and every
`finally` removes its temporary folder."""
import contextlib
import json
import os
import signal
import subprocess
import sys
import time

from .. import programs
from ..common import require
from ..allocators import allocator_env

STDERR_TAIL = 600
RUN_TIMEOUT = 300       # `hoardlab run`'s default, seconds (a run at scale 1 takes a few)
STOP_GRACE = 5.0        # seconds between SIGTERM and SIGKILL to a child's group


@contextlib.contextmanager
def interruptible():
    """SIGTERM raises KeyboardInterrupt, as SIGINT does, while inside (a `with` or a
    decorator): the code below then ends its children (stop) and runs its `finally`s. The
    default action of SIGTERM would end the tool alone and leave its children running."""
    def handler(signum, frame):
        raise KeyboardInterrupt("signal %d" % signum)
    try:
        old = signal.signal(signal.SIGTERM, handler)
    except ValueError:                  # not the main thread: leave it be
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def stop(p, grace=STOP_GRACE):
    """End child p, started with start_new_session=True, and every process it started:
    SIGTERM to its process group (meson test passes it on to the tests it runs), SIGKILL
    after `grace` seconds."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, None)):
        try:
            os.killpg(p.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            p.wait(wait)
            break
        except subprocess.TimeoutExpired:
            continue


def call(argv, timeout=None, **kw):
    """subprocess.run(argv, capture_output=True, text=True) in a process group of its own,
    which is ended whole on a timeout (subprocess.TimeoutExpired, its output so far in
    .stderr) or an interruption. Returns the CompletedProcess."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True, **kw)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(p, grace=1.0)
        out, err = p.communicate()
        raise subprocess.TimeoutExpired(argv, timeout, output=out, stderr=err)
    except BaseException:
        stop(p, grace=1.0)
        raise
    return subprocess.CompletedProcess(argv, p.returncode, out, err)


def signal_name(code):
    """'SIGSEGV' for an exit code -11 (killed by signal 11), else None."""
    if code is None or code >= 0:
        return None
    try:
        return signal.Signals(-code).name
    except ValueError:
        return "signal %d" % -code
PRELOAD_IGNORED = "from LD_PRELOAD cannot be preloaded"     # ld.so's words, then ": ignored."


def hlbench_argv(hlbench, run):
    argv = [hlbench, run["workload"], "--threads", str(run["threads"]),
            "--scale", repr(float(run["scale"])), "--seed", str(run["seed"]),
            "--label", run.get("workload_label", run["workload"])]
    if run.get("pin"):
        argv.append("--pin")
    for k, v in run.get("params", {}).items():
        argv += ["--" + k, str(v)]
    argv += list(run.get("extra_args", []))
    return argv


def parse_records(stdout):
    """JSON records (one object a line); other lines are ignored. Returns (records, bad)."""
    recs, bad = [], 0
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if isinstance(obj, dict):
            recs.append(obj)
    return recs, bad


def run_one(run, bdir, hlbench=None):
    """Run `run` (a dict from sweep.expand or the `run` command). Returns a result dict:
    status ok / failed / timeout / no-output, exit_code, error (stderr tail), records.
    A real program's run (a [program] section) is programs.run_one's."""
    if run.get("program"):
        return programs.run_one(run, bdir)
    hlbench = hlbench or require(bdir, "hlbench")
    env = allocator_env(run["base"], run["knobs"], bdir)
    argv = hlbench_argv(hlbench, run)
    t0 = time.time()
    res = {"argv": argv, "started_at": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t0)),
           "records": [], "exit_code": None, "error": "", "status": "ok",
           "env": {k: v for k, v in env.items()
                   if k.startswith("HOARD_") or k == "LD_PRELOAD"}}
    try:
        p = call(argv, env=env, timeout=run.get("timeout") or None, errors="replace")
        res["exit_code"] = p.returncode
        err = p.stderr.strip()
        res["error"] = err[-STDERR_TAIL:]
        recs, _ = parse_records(p.stdout)
        res["records"] = recs
        if env.get("LD_PRELOAD") and PRELOAD_IGNORED in err:
            # ld.so could not load the allocator and ran the program under glibc's malloc:
            # whatever it measured, it was not the allocator named.
            res["status"] = "not-loaded"
            line = next(ln for ln in err.splitlines() if PRELOAD_IGNORED in ln)
            res["error"] = "the allocator was not loaded: " + line.strip()
        elif p.returncode != 0:
            res["status"] = "failed"
            sig = signal_name(p.returncode)
            if sig:
                res["error"] = ("killed by %s" % sig) + (": " + res["error"] if res["error"]
                                                         else "")
            elif not res["error"]:
                res["error"] = "exit status %d, no message" % p.returncode
        elif not recs:
            res["status"] = "no-output"
            res["error"] = (res["error"] + " | " if res["error"] else "") + \
                "hlbench printed no JSON record"
    except subprocess.TimeoutExpired as e:
        res["status"] = "timeout"
        tail = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) \
            else (e.stderr or "")
        res["error"] = ("timed out after %gs. " % run["timeout"] + tail.strip())[-STDERR_TAIL:]
    except OSError as e:
        res["status"] = "failed"
        res["error"] = "cannot run %s: %s" % (argv[0], e.strerror)
    res["elapsed_s"] = round(time.time() - t0, 4)
    return res


def fmt_time(s):
    s = int(round(max(0, s)))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return "%d:%02d:%02d" % (h, m, sec) if h else "%d:%02d" % (m, sec)


class Progress:
    """'[ i/n] allocator workload t=T rep r | elapsed | left ~' on stderr. The estimate of
    time left uses the mean duration of finished runs of the same workload (else of all),
    and is '?' until a sixteenth of the runs is done."""

    def __init__(self, total, stream=None, quiet=False):
        self.total, self.done, self.t0 = total, 0, time.time()
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.by_wl, self.all = {}, []
        self.remaining = {}

    def plan(self, runs):
        for r in runs:
            self.remaining[r["workload_label"]] = self.remaining.get(r["workload_label"], 0) + 1

    def add(self, run):
        """One more run to do (a disturbed run redone)."""
        self.total += 1
        self.plan([run])

    def left(self):
        # No estimate from the first sixteenth of the runs: the shuffled order's first runs
        # are too few to stand for the rest (the main job of 2026-11-28, 903 runs, idle: the
        # estimates after 2 to 42 runs were exceeded by up to 7 minutes; none after).
        if len(self.all) < max(1, self.total // 16):
            return None
        mean_all = sum(self.all) / len(self.all)
        tot = 0.0
        for wl, n in self.remaining.items():
            d = self.by_wl.get(wl)
            tot += n * (sum(d) / len(d) if d else mean_all)
        return tot

    def start(self, i, run):
        if self.quiet:
            return
        left = self.left()
        line = "[%*d/%d] %s %s t=%d rep %d | elapsed %s | left %s" % (
            len(str(self.total)), i + 1, self.total, run["variant"], run["workload_label"],
            run["threads"], run["repetition"], fmt_time(time.time() - self.t0),
            "~" + fmt_time(left) if left is not None else "?")
        if self.tty:
            cols = 120
            try:
                cols = os.get_terminal_size(self.stream.fileno()).columns
            except (OSError, ValueError, AttributeError):
                pass
            self.stream.write("\r\033[K" + line[:cols - 1])
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self, run, elapsed, status, error=""):
        self.done += 1
        self.all.append(elapsed)
        self.by_wl.setdefault(run["workload_label"], []).append(elapsed)
        self.remaining[run["workload_label"]] -= 1
        if status != "ok" and not self.quiet:
            msg = (error or "").strip().splitlines()
            msg = msg[-1] if msg else ""
            self.stream.write(("\n" if self.tty else "") + "  %s: %s %s t=%d: %s\n" % (
                status, run["variant"], run["workload_label"], run["threads"], msg[:200]))
            self.stream.flush()

    def close(self):
        if not self.quiet:
            if self.tty:
                self.stream.write("\n")
            self.stream.write("%d runs in %s\n" % (self.done, fmt_time(time.time() - self.t0)))
            self.stream.flush()
