"""Sweeps on a Slurm cluster (docs/tool.md, "Sweeps on Slurm").

`hoardlab sweep FILE --slurm` makes the plan a local sweep would make (the same runs in the
same shuffled order), writes it with its seed and the build's identity into the sweep's
folder, and submits one job array: task K runs shard K of the plan (a contiguous stretch of
the shuffled order) on a node of its own (--exclusive). `hoardlab slurm-task DIR K` is what a
task runs (task.py); `hoardlab collect DIR` merges the tasks' parts into runs.csv and
the report, names every task that is missing or failed, and with --resume submits those again
(collect.py). plan.py: Slurm's commands, the build's identity, the plan, the job script,
the folder, submission; this file: the command line, the package's one face.

The folder (on a filesystem every node sees):

    plan.json                  the runs in execution order, the shards, the seed, P, the build
    job.sh                     the job script sbatch is given
    slurm.json                 every submission: job id, tasks, time, command
    slurm/<job>_<task>.out     Slurm's output of a task (its progress lines)
    parts/task-<K>.json        the task's state: node, attempt, started, finished, error
    parts/task-<K>.jsonl       one line per run done: its rows, rounds and records
    meta.json, <name>.ini      as a local sweep's; collect adds the nodes and the jobs
    runs.csv, rounds.csv, records.jsonl, report.md, plots    written by collect
"""
import os

from .. import common, sweeps
from ..common import REPO, ToolError, log
from .collect import collect
from .plan import command, make_plan, prepare, print_plan, read_plan, submit
from .task import run_task


# --- the commands ----------------------------------------------------------------------------

def add_sweep_options(s):
    g = s.add_argument_group("on a Slurm cluster (docs/tool.md, \"Sweeps on Slurm\")")
    g.add_argument("--slurm", action="store_true",
                   help="submit the runs as one Slurm job array: a shard of the plan per "
                   "task, each on a node of its own; the folder must be on a filesystem "
                   "every node sees (--dry-run prints the plan and the job script)")
    g.add_argument("--partition", help="Slurm partition (default: Slurm's default)")
    g.add_argument("--nodes", type=int, help="array tasks, each on a node of its own "
                   "(default: the partition's nodes, at most one per run)")
    g.add_argument("--time", help="time limit of each task (sbatch --time), e.g. 2:00:00")
    g.add_argument("--wait", action="store_true",
                   help="wait for the array, then merge and report (as collect --wait)")


def options_used(a):
    return bool(a.slurm or a.wait or a.partition or a.nodes is not None or a.time)


def add_commands(sub):
    s = sub.add_parser("collect", help="merge a Slurm sweep's parts into runs.csv and the "
                       "report; name the tasks missing or failed")
    s.add_argument("dir")
    s.add_argument("--resume", action="store_true",
                   help="submit the missing and failed tasks again (each runs only its runs "
                   "not done yet)")
    s.add_argument("--wait", action="store_true",
                   help="wait until none of the sweep's tasks is queued or running (after "
                   "--resume: the new job too), then merge")
    s.set_defaults(func=cmd_collect)
    s = sub.add_parser("slurm-task", help="run task K of a sweep on Slurm (its job script "
                       "calls this)")
    s.add_argument("dir")
    s.add_argument("task", type=int)
    s.set_defaults(func=cmd_task)


def cmd_sweep(a, bdir, build):
    """`sweep FILE --slurm ...`: plan, write the folder, submit; with --wait, collect."""
    if not a.slurm:
        raise ToolError("--partition, --nodes, --time and --wait go with --slurm")
    if a.nodes is not None and a.nodes < 1:
        raise ToolError("--nodes: must be at least 1")
    if not a.dry_run:
        command("sbatch")       # before anything is planned or written
    plan, sw, runs = make_plan(a.file, bdir, seed=a.seed, ntasks=a.nodes,
                               partition=a.partition, time_limit=a.time, dry_run=a.dry_run)
    outdir = os.path.abspath(a.out or sweeps.out_dir_for(
        sw.name, a.results or os.path.join(REPO, "results")))
    sweeps.validate_sweep(sw, runs, bdir)
    if a.dry_run:
        print_plan(plan, outdir)
        return 0
    prepare(outdir, plan, sw, bdir, build)
    log("sweep %s: %d runs in %d tasks, shuffle seed %s, %s -> %s" % (
        sw.name, len(runs), len(plan["shards"]), plan["seed"], plan["ncores_note"], outdir))
    try:
        submit(outdir, plan, list(range(len(plan["shards"]))))
    except ToolError as e:
        raise ToolError("%s\n%s holds the plan: once that is fixed, tools/hoardlab collect %s "
                        "--resume submits it" % (e, outdir, outdir))
    if a.wait:
        return collect(outdir, wait=True)
    log("slurm: tools/hoardlab collect %s [--wait] merges the results" % outdir)
    print(outdir)
    return 0


def cmd_task(a):
    outdir = os.path.abspath(a.dir)
    plan = read_plan(outdir)
    if not 0 <= a.task < len(plan["shards"]):
        raise ToolError("task %d: the plan has tasks 0-%d" % (a.task, len(plan["shards"]) - 1))
    return run_task(outdir, plan, a.task, common.build_dir(a.build_dir))


def cmd_collect(a):
    return collect(os.path.abspath(a.dir), resume=a.resume, wait=a.wait)
