"""A Slurm sweep's plan and folder (the package's docstring, __init__.py, describes both):
Slurm's client commands, the build's identity, the plan, the job script, the folder and
submission."""
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import time

from .. import common, runkit, sweeps
from ..common import REPO, ToolError, log, sha256_file

PLAN_FORMAT = 1
BUILD_FILES = ("src/libhoardlab.so", "harness/hlbench")     # what a task runs: the build


class BuildMismatch(ToolError):
    """The library or hlbench a task finds is not the sweep's."""


def utc_now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def read_json(path, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return default
    except (OSError, ValueError) as e:
        raise ToolError("%s: %s" % (path, e))


def write_json(path, obj):
    """Whole or not at all (collect may read while a task writes)."""
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1, default=str)
        f.write("\n")
    os.replace(tmp, path)


# --- Slurm's client commands -----------------------------------------------------------------

def command(name):
    """A Slurm client command's path; a clear error when this machine has none."""
    path = shutil.which(name)
    if not path:
        raise ToolError("%s not found: this machine has no Slurm client commands (Debian "
                        "package slurm-client: tools/install-deps installs it, listed in "
                        "tools/packages/slurm.txt)" % name)
    return path


def call(argv, check=True, timeout=60):
    """Run a Slurm client command in our environment (so SLURM_CONF and SBATCH_* apply)."""
    exe = command(argv[0])
    try:
        p = subprocess.run([exe] + argv[1:], capture_output=True, text=True, timeout=timeout,
                           errors="replace")
    except subprocess.TimeoutExpired:
        raise ToolError("%s: no answer in %d s: is slurmctld reachable? (SLURM_CONF=%s)"
                        % (" ".join(argv), timeout, os.environ.get("SLURM_CONF", "unset")))
    if check and p.returncode != 0:
        raise ToolError("%s failed (exit %d): %s" % (" ".join(argv), p.returncode,
                                                     (p.stderr or p.stdout).strip()[-400:]))
    return p


def partition_cpus(partition):
    """{node: CPUs} of a partition (Slurm's default partition if None), from sinfo."""
    p = call(["sinfo", "-h", "-N", "-o", "%N %c %P"] + (["-p", partition] if partition else []))
    res = {}
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1].isdigit() and (partition or f[2].endswith("*")):
            res[f[0]] = int(f[1])
    if not res:
        raise ToolError("sinfo lists no nodes in %s" % (
            "partition %s" % partition if partition else "the default partition"))
    return res


def plan_cores(partition, dry_run):
    """P of the sweep file on the cluster: the CPUs of the partition's nodes (the fewest if
    they differ). Returns (P, {node: CPUs} or None, a note for plan.json)."""
    where = "partition %s" % partition if partition else "the default partition"
    try:
        cpus = partition_cpus(partition)
    except ToolError as e:
        if not dry_run:
            raise
        why = str(e).strip().splitlines()[-1]
        return common.cores(), None, "sinfo could not tell (%s): P = this machine's %d CPUs" % (
            why[-160:], common.cores())
    vals = sorted(set(cpus.values()))
    if len(vals) > 1:
        log("slurm: warning: the nodes of %s have %s CPUs: P = %d, the fewest"
            % (where, ", ".join(map(str, vals)), vals[0]))
        return vals[0], cpus, "P = %d, the fewest CPUs of a node of %s (sinfo: %s)" % (
            vals[0], where, ", ".join(map(str, vals)))
    return vals[0], cpus, "P = %d, the CPUs of each node of %s (sinfo)" % (vals[0], where)


def array_spec(tasks):
    """[0, 1, 2, 5, 7, 8] -> '0-2,5,7-8' (sbatch --array)."""
    out, tasks = [], sorted(tasks)
    i = 0
    while i < len(tasks):
        j = i
        while j + 1 < len(tasks) and tasks[j + 1] == tasks[j] + 1:
            j += 1
        out.append(str(tasks[i]) if i == j else "%d-%d" % (tasks[i], tasks[j]))
        i = j + 1
    return ",".join(out)


# --- the build a task runs -------------------------------------------------------------------


def head_commit():
    try:
        p = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True,
                           text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def build_identity(bdir):
    """What plan.json records of the build: the commit and a hash of each file a task runs."""
    for which in ("lib", "hlbench"):
        common.require(bdir, which)
    git = runkit.git_info()
    return {"dir": bdir, "commit": git.get("commit"), "dirty": git.get("dirty"),
            "diff_sha1": git.get("diff_sha1"),
            "sha256": {rel: sha256_file(os.path.join(bdir, rel)) for rel in BUILD_FILES}}


def check_build(plan, bdir, who, so="so nothing ran"):
    """BuildMismatch unless the library and hlbench in `bdir` are the plan's (sha256) and the
    checkout this tool runs from is at the plan's commit (when git can tell)."""
    want = plan["build"]
    bad = []
    for rel, h in sorted(want["sha256"].items()):
        p = os.path.join(bdir, rel)
        got = sha256_file(p) if os.path.isfile(p) else None
        if got is None:
            bad.append("%s is missing" % p)
        elif got != h:
            bad.append("%s has sha256 %s..., the sweep's %s..." % (p, got[:12], h[:12]))
    commit = head_commit()
    if commit and want.get("commit") and commit != want["commit"]:
        bad.append("the checkout %s is at commit %s, the sweep's is %s"
                   % (REPO, commit[:12], want["commit"][:12]))
    if bad:
        raise BuildMismatch(
            "%s: not the sweep's build (%s), %s: a sweep never mixes builds. "
            "Build the sweep's commit %s there (tools/hoardlab build) and resume "
            "(tools/hoardlab collect DIR --resume), or submit a new sweep"
            % (who, "; ".join(bad), so, (want.get("commit") or "?")[:12]))


# --- the plan and the job script ---------------------------------------------------------------

def make_plan(path, bdir, seed=None, ntasks=None, partition=None, time_limit=None,
              ncores=None, dry_run=False):
    """The sweep's runs in their shuffled order (sweeps.shuffled, as a local sweep), cut into
    `ntasks` shards. Returns (plan, sweep, runs)."""
    cpus, note = None, "P = %s, given" % ncores
    if ncores is None:
        ncores, cpus, note = plan_cores(partition, dry_run)
    sw = sweeps.read_sweep(path, ncores=ncores, strategies=sweeps.strategies_or_none(bdir))
    runs = sw.expand()
    if seed is None:
        seed = sw.seed if sw.seed is not None else random.SystemRandom().randrange(1 << 31)
    order = sweeps.shuffled(runs, seed)
    n = len(order)
    ntasks = max(1, min(ntasks or (len(cpus) if cpus else 1), n))
    plan = {
        "format": PLAN_FORMAT, "created_at": utc_now(),
        "sweep": {"name": sw.name, "path": os.path.abspath(path),
                  "file": os.path.basename(path)},
        "seed": seed, "ncores": ncores, "ncores_note": note,
        "repo": REPO, "python": sys.executable, "build": build_identity(bdir),
        "slurm": {"partition": partition, "time": time_limit, "job_name": "hoardlab-" + sw.name,
                  "partition_cpus": cpus},
        "shards": [list(range(k * n // ntasks, (k + 1) * n // ntasks)) for k in range(ntasks)],
        "runs": [dict(r, order=i) for i, r in enumerate(order)],
    }
    return plan, sw, runs


def job_script(plan, outdir):
    """The job script: #SBATCH lines for the whole array, then the task's command."""
    s, q = plan["slurm"], shlex.quote
    b = plan["build"]
    lines = [
        "#!/bin/bash",
        "# hoardlab sweep '%s' on Slurm, written by tools/hoardlab sweep --slurm." % (
            plan["sweep"]["name"]),
        "# Array task K runs shard K of the shuffled plan (plan.json: %d runs, seed %s) on a"
        % (len(plan["runs"]), plan["seed"]),
        "# node of its own, once the build it finds is the sweep's (commit %s, sha256 of"
        % (b.get("commit") or "?")[:12],
        "# libhoardlab.so and hlbench); its runs go to parts/task-K.jsonl. tools/hoardlab",
        "# collect DIR merges them; collect DIR --resume submits the missing tasks again.",
        "#SBATCH --job-name=%s" % s["job_name"],
        "#SBATCH --array=0-%d" % (len(plan["shards"]) - 1),
        "#SBATCH --nodes=1",
        "#SBATCH --ntasks=1",
        "#SBATCH --exclusive",
        "#SBATCH --output=%s" % os.path.join(outdir, "slurm", "%A_%a.out"),
        "#SBATCH --chdir=%s" % plan["repo"],
    ]
    if s.get("partition"):
        lines.append("#SBATCH --partition=%s" % s["partition"])
    if s.get("time"):
        lines.append("#SBATCH --time=%s" % s["time"])
    lines += ["", "exec %s %s --build-dir %s slurm-task %s \"$SLURM_ARRAY_TASK_ID\"" % (
        q(plan["python"]), q(os.path.join(plan["repo"], "tools", "hoardlab")), q(b["dir"]),
        q(outdir)), ""]
    return "\n".join(lines)


def print_plan(plan, outdir):
    """--dry-run: the plan with each run's task, then the job script."""
    print("sweep %s: %d runs, shuffle seed %s, %d Slurm tasks (%s)" % (
        plan["sweep"]["name"], len(plan["runs"]), plan["seed"], len(plan["shards"]),
        plan["ncores_note"]))
    task = {o: k for k, shard in enumerate(plan["shards"]) for o in shard}
    for r in plan["runs"]:
        print("%4d  task %-3d %-28s %-20s t=%-3d rep %d  knobs %s" % (
            r["order"] + 1, task[r["order"]], r["variant"], r["workload_label"], r["threads"],
            r["repetition"], runkit.knobs_text(r["knobs"]) or "-"))
    print("\njob script (%s):\n" % os.path.join(outdir, "job.sh"))
    print(job_script(plan, outdir))


def paths(outdir, k=None):
    return {"plan": os.path.join(outdir, "plan.json"), "jobs": os.path.join(outdir, "slurm.json"),
            "status": os.path.join(outdir, "parts", "task-%s.json" % k),
            "part": os.path.join(outdir, "parts", "task-%s.jsonl" % k)}


def read_plan(outdir):
    plan = read_json(paths(outdir)["plan"])
    if plan is None:
        raise ToolError("%s: no plan.json: not a sweep submitted with --slurm" % outdir)
    if plan.get("format") != PLAN_FORMAT:
        raise ToolError("%s: plan.json format %s, this tool reads %d"
                        % (outdir, plan.get("format"), PLAN_FORMAT))
    return plan


def prepare(outdir, plan, sw, bdir, build=None):
    """Write the sweep's folder (plan.json, the sweep file, meta.json, job.sh); submit
    nothing."""
    if os.path.exists(paths(outdir)["plan"]):
        raise ToolError("%s already holds a sweep (plan.json): tools/hoardlab collect it, or "
                        "choose another --out" % outdir)
    for sub in ("slurm", "parts"):
        os.makedirs(os.path.join(outdir, sub), exist_ok=True)
    write_json(paths(outdir)["plan"], plan)
    write_json(paths(outdir)["jobs"], {"submissions": []})
    with open(os.path.join(outdir, os.path.basename(sw.path)), "w") as f:
        f.write(sw.text)
    script = os.path.join(outdir, "job.sh")
    with open(script, "w") as f:
        f.write(job_script(plan, outdir))
    os.chmod(script, 0o755)
    meta = runkit.collect_meta(bdir, sw, {"shuffle_seed": plan["seed"],
                                      "runs_planned": len(plan["runs"]), "build": build})
    meta["submit_host"] = meta.pop("machine")       # collect sets `machine`: the nodes'
    meta["slurm"] = {"jobs": [], "tasks": len(plan["shards"]), "ncores": plan["ncores_note"],
                     "partition": plan["slurm"]["partition"]}
    if sw.cost:
        meta["cost"] = {"error": "a sweep on Slurm measures no cost table (cost = yes): run "
                        "`tools/hoardlab cost` on the sweep's build"}
    runkit.write_meta(os.path.join(outdir, "meta.json"), meta)


def submit(outdir, plan, tasks):
    """sbatch job.sh for `tasks` (--array on the command line overrides the script's)."""
    argv = ["sbatch", "--parsable", "--array=" + array_spec(tasks),
            os.path.join(outdir, "job.sh")]
    out = call(argv).stdout.strip()
    job = out.splitlines()[-1].split(";")[0].strip() if out else ""
    if not job.isdigit():
        raise ToolError("sbatch printed no job id: %r" % out)
    jobs = read_json(paths(outdir)["jobs"], {"submissions": []})
    jobs["submissions"].append({"job": job, "tasks": sorted(tasks), "submitted_at": utc_now(),
                                "argv": argv, "slurm_conf": os.environ.get("SLURM_CONF")})
    write_json(paths(outdir)["jobs"], jobs)
    log("slurm: submitted job %s: task%s %s of %d (%d runs); output in %s" % (
        job, "s" if len(tasks) > 1 else "", array_spec(tasks), len(plan["shards"]),
        sum(len(plan["shards"][k]) for k in tasks), os.path.join(outdir, "slurm")))
    return job
