"""The runs that failed, each with its status, exit code and message."""
from .. import fmt as F


def failures(rows):
    bad = [r for r in rows if r.get("status") != "ok"]
    if not bad:
        return ["## Failed runs", "", "None.", ""]
    rs = [(r["variant"], r["workload_label"], r["threads"], r["repetition"], r["status"],
           r.get("exit_code") if r.get("exit_code") is not None else "–",
           (r.get("error") or "").replace("|", "/")[-160:]) for r in bad]
    return ["## Failed runs", "",
            "These runs are excluded from every number below; the sweep went on.", "",
            F.table(["allocator", "workload", "threads", "rep", "status", "exit", "message"], rs),
            ""]
