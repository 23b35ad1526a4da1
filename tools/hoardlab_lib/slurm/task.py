"""A task of a sweep on Slurm (`hoardlab slurm-task DIR K`, what job.sh runs): check that
the build is the sweep's, then run the runs of shard K not done yet (an earlier attempt may
have done some), appending each to parts/task-K.jsonl as it ends; parts/task-K.json says how
the task went (running, done, stopped, failed, build-mismatch). See __init__.py."""
import json
import os
import signal

from .. import allocators, common, runkit
from ..common import ToolError, log, read_json_lines
from .plan import BuildMismatch, check_build, paths, read_json, write_json, utc_now


class Stopped(Exception):
    """SIGTERM reached a task: scancel, the time limit, or the node shutting down."""


def read_part(path):
    """{order: entry} of a part; a line cut short (a task killed while writing) is skipped."""
    res = {}
    for e in read_json_lines(path):
        if "order" in e:
            res.setdefault(e["order"], e)
    return res


def _stop(signum, frame):
    raise Stopped()


def run_task(outdir, plan, k, bdir):
    """Run shard k's runs not done yet (an earlier attempt may have done some), appending
    each to parts/task-k.jsonl as it ends; parts/task-k.json says how the task went."""
    p = paths(outdir, k)
    job = os.environ.get("SLURM_ARRAY_JOB_ID")
    job = "%s_%s" % (job, os.environ.get("SLURM_ARRAY_TASK_ID", k)) if job else None
    old = read_json(p["status"]) or {}
    attempts = old.pop("attempts", [])
    if old:
        attempts.append(old)
    st = {"task": k, "job": job, "node": runkit.node_name(), "attempt": len(attempts) + 1,
          "state": "running", "started_at": utc_now(), "pid": os.getpid(),
          "machine": runkit.machine(), "attempts": attempts}
    write_json(p["status"], st)
    shard = plan["shards"][k]
    done = set(read_part(p["part"])) & set(shard)
    todo = [o for o in shard if o not in done]
    ran, rc = 0, 0
    prev = signal.signal(signal.SIGTERM, _stop)
    try:
        check_build(plan, bdir, "task %d on %s" % (k, st["node"]))
        for base in sorted({plan["runs"][o]["base"] for o in todo}):
            if allocators.allocator_kind(base) == "production":
                allocators.production_library(base)        # missing on this node: say so now
        hlbench = common.require(bdir, "hlbench")
        log("task %d (job %s) on %s: %d runs%s" % (
            k, job or "outside Slurm", st["node"], len(todo),
            " (%d done by an earlier attempt)" % len(done) if done else ""))
        prog = runkit.Progress(len(todo))
        prog.plan([plan["runs"][o] for o in todo])
        with open(p["part"], "a") as f:
            if f.tell() and not _ends_with_newline(p["part"]):
                f.write("\n")               # after a line cut short: start a fresh one
            for i, o in enumerate(todo):
                run = plan["runs"][o]
                prog.start(i, run)
                res = runkit.run_one(run, bdir, hlbench)
                if res["exit_code"] == -signal.SIGTERM:
                    raise Stopped()     # hlbench got the job's SIGTERM before we did
                series = []
                rows, rounds = runkit.rows_for(run, res, plan["sweep"]["name"], o, bdir, series)
                prog.finish(run, res["elapsed_s"], rows[0]["status"], rows[0]["error"])
                f.write(json.dumps({"order": o, "index": run["index"], "task": k, "job": job,
                                    "rows": rows, "rounds": rounds, "series": series,
                                    "records": res["records"]}) + "\n")
                f.flush()
                ran += 1
        prog.close()
        st["state"] = "done"
    except BuildMismatch as e:
        st.update(state="build-mismatch", error=str(e))
        log("hoardlab: %s" % e)
        rc = 3
    except Stopped:
        st.update(state="stopped", error="stopped by SIGTERM after %d of its %d runs "
                  "(scancel, the time limit, or the node shutting down)"
                  % (len(done) + ran, len(shard)))
        log("hoardlab: task %d %s" % (k, st["error"]))
        rc = 128 + signal.SIGTERM
    except ToolError as e:
        st.update(state="failed", error=str(e))
        log("hoardlab: task %d on %s: %s" % (k, st["node"], e))
        rc = 2
    except BaseException as e:
        st.update(state="failed", error="%s: %s" % (type(e).__name__, e))
        raise
    finally:
        signal.signal(signal.SIGTERM, prev)
        st.update(finished_at=utc_now(), runs=len(done) + ran, ran=ran,
                  loadavg_end=runkit.loadavg())
        write_json(p["status"], st)
    return rc


def _ends_with_newline(path):
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"
