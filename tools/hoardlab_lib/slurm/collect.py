"""`hoardlab collect DIR` for a sweep on Slurm: which tasks are done, queued, running,
missing or failed (the parts, squeue, scontrol), --resume (submit the missing and failed
ones again), --wait, and the merge of the parts into a local sweep's files and report. See
__init__.py."""
import json
import os
import shutil
import time

from .. import runkit, sweeps
from ..common import ToolError, log
from .plan import call, check_build, paths, read_json, read_plan, submit
from .task import read_part

POLL_S = 2.0                # squeue, while waiting for the array
SQUEUE_PATIENCE = 300       # seconds squeue may fail in a row while waiting
SLURM_LOOKUPS = 20          # scontrol look-ups of tasks that did not finish, per collect


def submissions(outdir):
    return read_json(paths(outdir)["jobs"], {"submissions": []})["submissions"]


def queued(outdir, plan):
    """{task: (Slurm's id 'job_task', state)} of the sweep's tasks squeue still lists."""
    jobs = {s["job"] for s in submissions(outdir)}
    if not jobs:
        return {}
    out = call(["squeue", "-h", "-r", "--name=" + plan["slurm"]["job_name"],
                "-o", "%i %T"]).stdout
    res = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and "_" in f[0]:
            job, _, task = f[0].partition("_")
            if job in jobs and task.isdigit():
                res[int(task)] = (f[0], f[1])
    return res


def wait_for(outdir, plan):
    """Until squeue lists none of the sweep's tasks; one line on stderr at each change."""
    last, t0, failing = None, time.time(), None
    try:
        while True:
            try:
                q = queued(outdir, plan)
                failing = None
            except ToolError as e:      # slurmctld busy or restarting: a while, then give up
                failing = failing or time.time()
                if time.time() - failing > SQUEUE_PATIENCE:
                    raise
                log("slurm: %s; trying again" % e)
                time.sleep(POLL_S * 5)
                continue
            if not q:
                return
            counts = {}
            for _, state in q.values():
                counts[state.lower()] = counts.get(state.lower(), 0) + 1
            text = ", ".join("%d %s" % (n, s) for s, n in sorted(counts.items()))
            if text != last:
                log("slurm: waiting (%s): %s" % (runkit.fmt_time(time.time() - t0), text))
                last = text
            time.sleep(POLL_S)
    except KeyboardInterrupt:
        raise ToolError("stopped waiting; the job goes on: tools/hoardlab collect %s [--wait] "
                        "merges it later" % outdir)


def slurm_view(jobtask):
    """Slurm's word on a task that ended (scontrol, while it keeps the job), or None."""
    if not jobtask or not shutil.which("scontrol"):
        return None
    p = call(["scontrol", "-o", "show", "job", jobtask], check=False, timeout=30)
    if p.returncode != 0:
        return None
    f = dict(kv.split("=", 1) for kv in p.stdout.split() if "=" in kv)
    if f.get("ArrayTaskId") not in (None, jobtask.partition("_")[2]):
        return None
    return "Slurm: %s, exit %s%s%s" % (
        f.get("JobState", "?"), f.get("ExitCode", "?"),
        ", reason %s" % f["Reason"] if f.get("Reason") not in (None, "None") else "",
        " on %s" % f["NodeList"] if f.get("NodeList") not in (None, "(null)") else "")


def task_states(outdir, plan):
    """One dict per task: state (done, queued, running, missing, failed), why, its runs."""
    q = queued(outdir, plan)
    last_job = {}
    for s in submissions(outdir):
        for k in s["tasks"]:
            last_job[k] = "%s_%d" % (s["job"], k)
    res, lookups = [], 0
    for k, shard in enumerate(plan["shards"]):
        p = paths(outdir, k)
        got = {o: e for o, e in read_part(p["part"]).items() if o in shard}
        st = read_json(p["status"]) or {}
        t = {"task": k, "runs": len(shard), "got": got, "status": st,
             "job": q[k][0] if k in q else last_job.get(k), "why": ""}
        if k in q:
            t["state"] = "running" if q[k][1] in ("RUNNING", "COMPLETING") else "queued"
            t["why"] = q[k][1].lower()
        elif len(got) == len(shard):
            t["state"] = "done"
        elif st.get("state") in ("build-mismatch", "failed"):
            t.update(state="failed", why=st.get("error", ""))
        elif st:
            t["state"] = "missing"
            t["why"] = st.get("error") if st.get("state") == "stopped" else (
                "started on %s at %s and ended without a word after %d of %d runs: killed "
                "(SIGKILL, out of memory) or its node failed"
                % (st.get("node"), st.get("started_at"), len(got), len(shard)))
        else:
            t["state"] = "missing"
            t["why"] = "never started: cancelled or failed before it ran" if k in last_job \
                else "never submitted"
        if t["state"] in ("missing", "failed") and lookups < SLURM_LOOKUPS and t["job"]:
            lookups += 1
            view = slurm_view(t["job"])
            if view:
                t["why"] += "; " + view
        res.append(t)
    return res


def task_name(t):
    return "task %d (job %s)" % (t["task"], t["job"] or "not submitted")


def collect(outdir, resume=False, wait=False):
    """Merge the parts into runs.csv, rounds.csv, records.jsonl, meta.json and the report;
    print each task's state. With resume, submit the missing and failed tasks first. Exit
    status 0 when every task is done, else 1."""
    plan = read_plan(outdir)
    if wait:
        wait_for(outdir, plan)
    tasks = task_states(outdir, plan)
    if resume:
        todo = [t["task"] for t in tasks if t["state"] in ("missing", "failed")]
        if todo:
            check_build(plan, plan["build"]["dir"], "resume", "so nothing was submitted")
            submit(outdir, plan, todo)
            if wait:
                wait_for(outdir, plan)
            tasks = task_states(outdir, plan)
        else:
            log("slurm: no task is missing or failed: nothing to submit")
    rpath = merge(outdir, plan, tasks)
    n = len(plan["runs"])
    got = sum(len(t["got"]) for t in tasks)
    print("sweep %s: %d runs in %d task%s; %d merged into %s" % (
        plan["sweep"]["name"], n, len(tasks), "s" if len(tasks) > 1 else "", got,
        os.path.join(outdir, "runs.csv")))
    for t in tasks:
        where = sorted({e["rows"][0].get("node") for e in t["got"].values() if e["rows"]})
        print("  %s: %s, %d of %d runs%s%s" % (
            task_name(t), t["state"], len(t["got"]), t["runs"],
            " on %s" % ", ".join(map(str, where)) if where else "",
            ": " + t["why"] if t["why"] and t["state"] != "done" else ""))
    bad = [t for t in tasks if t["state"] in ("missing", "failed")]
    busy = [t for t in tasks if t["state"] in ("queued", "running")]
    if bad:
        print("%d task%s missing or failed (%s): tools/hoardlab collect %s --resume submits "
              "%s again; Slurm's output is in %s" % (
                  len(bad), "s" if len(bad) > 1 else "",
                  ", ".join("task %d" % t["task"] for t in bad), outdir,
                  "them" if len(bad) > 1 else "it", os.path.join(outdir, "slurm")))
    if busy:
        print("%d task%s still queued or running: collect again when they end (or --wait)"
              % (len(busy), "s" if len(busy) > 1 else ""))
    print(rpath)
    return 0 if not bad and not busy else 1


def _worst_load(statuses, key):
    vals = [s.get(key) for s in statuses if s.get(key)]
    return max(vals, key=lambda v: v[0]) if vals else None


def merge(outdir, plan, tasks):
    """The tasks' parts as a local sweep's folder: runs.csv, rounds.csv, records.jsonl,
    meta.json (`machine`: a node of the kind most runs ran on; `nodes`, `slurm`), report."""
    rows, rounds, recs, series = [], [], [], []
    for t in tasks:
        for o, e in sorted(t["got"].items()):
            rows += e["rows"]
            rounds += e["rounds"]
            series += e.get("series", [])       # parts written before series.csv have none
            recs += [{"index": e["index"], "order": o, "variant": plan["runs"][o]["variant"],
                      "record": r} for r in e["records"]]
    rows.sort(key=lambda r: (r["index"], r["record"]))
    rounds.sort(key=lambda r: (r["index"], r.get("round") or 0))
    series.sort(key=lambda r: (r["index"], r.get("record") or 0, r.get("t_s") or 0))
    recs.sort(key=lambda r: r["order"])
    runkit.write_csv(os.path.join(outdir, "runs.csv"), rows,
                   runkit.columns_for(rows, plan["build"]["dir"]))
    runkit.write_csv(os.path.join(outdir, "rounds.csv"), rounds, runkit.ROUND_COLUMNS)
    runkit.write_series(outdir, series)
    with open(os.path.join(outdir, "records.jsonl"), "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
    # every node a task (or an earlier attempt of it) ran on, with its machine facts
    statuses = [s for t in tasks for s in [t["status"]] + t["status"].get("attempts", [])
                if s.get("machine")]
    by_node = {}
    for s in statuses:
        e = by_node.setdefault(s["node"], {"machine": s["machine"], "tasks": [], "load": []})
        e["tasks"].append(s["task"])
        e["load"].append(s)
    warnings = ["node %s has %s CPUs, the plan's P is %d" % (n, e["machine"].get("cores"),
                                                              plan["ncores"])
                for n, e in sorted(by_node.items())
                if e["machine"].get("cores") not in (None, plan["ncores"])]
    for w in warnings:
        log("slurm: warning: " + w)
    meta = runkit.read_meta(os.path.join(outdir, "meta.json"))
    meta["nodes"] = {n: {"machine": dict(e["machine"], loadavg_start=None),
                         "tasks": sorted(set(e["tasks"])),
                         "runs": sum(1 for r in rows if r.get("node") == n)}
                     for n, e in sorted(by_node.items())}
    kinds = runkit.node_kinds(rows)
    main = [n for n in (kinds[0]["nodes"] if kinds else []) if n in by_node]
    if main:
        load = [s for n in main for s in by_node[n]["load"]]     # the busiest of them
        meta["machine"] = dict(by_node[main[0]]["machine"],
                               loadavg_start=_worst_load([s["machine"] for s in load],
                                                         "loadavg_start"),
                               loadavg_end=_worst_load(load, "loadavg_end"))
    incomplete = ["%s %s" % (task_name(t), t["state"]) for t in tasks
                  if t["state"] != "done"]
    subs = submissions(outdir)
    starts = [s.get("started_at") for s in statuses if s.get("started_at")]
    ends = [s.get("finished_at") for s in statuses if s.get("finished_at")]
    meta.setdefault("slurm", {}).update(
        jobs=[s["job"] for s in subs], tasks=len(plan["shards"]), submissions=subs,
        states={str(t["task"]): t["state"] for t in tasks}, incomplete=incomplete,
        warnings=warnings, first_start=min(starts) if starts else None,
        last_end=max(ends) if ends else None)
    meta.update(runs_done=len({r["index"] for r in rows}), interrupted=bool(incomplete),
                runs_not_ok=sum(1 for r in rows if r.get("status") != "ok"))
    runkit.write_meta(os.path.join(outdir, "meta.json"), meta)
    return sweeps.make_report(outdir)
