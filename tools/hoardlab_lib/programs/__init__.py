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

Memory over time: hlrun -i samples the measured command's process tree (the
server's in server mode) every SERIES_INTERVAL_S, summing each process's smaps_rollup; the
record's `series` holds the samples in hlbench's form (runkit/tidy.py: series.csv and the
series.* columns), with no held_bytes (hoardlab's A is per process, in the statistics).

This file: a sweep's programs (setup and references before the first run, then each run);
spec.py: the section and its keys; proc.py: processes and statistics; run.py: one run.
"""

import os
import shutil
import subprocess
import tempfile
import time

from ..common import ToolError, log, require, sha256_file
from .proc import Proc, aggregate_stats, exit_text
from .run import execute, program_env
from .spec import TAIL, fill, is_program, section

# The package's face: a sweep reads a section and prepares, the runner runs, the report
# tells a program's row from hlbench's; spec.py, proc.py and run.py lie below.
__all__ = ("Prepared", "Proc", "aggregate_stats", "is_program", "prepare", "run_in_copy",
           "run_one", "section")


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
        p = Proc(fill(spec["setup"], seed=spec["seed"]), d, program_env("glibc", {}, bdir, d),
                 os.path.join(scratch, "stdout"), os.path.join(scratch, "stderr"),
                 require(bdir, "hlrun"))
        p.wait(time.perf_counter() + spec["setup_timeout"])
        if p.timed_out or p.code != 0:
            raise ToolError("%s setup %s: %s" % (
                where, "timed out after %gs" % spec["setup_timeout"] if p.timed_out
                else "failed (%s)" % exit_text(p.code), p.stderr_text().strip()[-TAIL:]))
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
    """A program run of the sweep plan (runkit.run_one hands it here)."""
    spec = run["program"]
    if "_refs" not in spec:
        raise ToolError("[program %s]: not prepared (programs.prepare runs the setup and the "
                        "glibc reference before the first run)" % spec["label"])
    return run_in_copy(spec, run["base"], run["knobs"], run["threads"], bdir, run["timeout"],
                       reference=spec["_refs"][run["threads"]])
