"""A sweep's runs executed in their shuffled order with the machine's other load seen and
waited out (load.py): before each run the sweep waits, bounded, for other processes to
quieten; a run they disturbed anyway (their CPU use during it above the threshold) is redone
later in the order, within a budget; after the planned runs, the groups whose taxonomy
verdict stayed *within noise* get more repetitions, interleaved, until it is decided or the
time budget is spent -- unless other processes kept the CPUs busy at every look (no quiet
run was made, and none would be), which no repetition can outwait. What happened is
returned for meta.json's `load`."""
import json
import random
import time

from .. import runkit
from . import load, undecided



class Progress(runkit.Progress):
    """runkit.Progress whose estimate of the time left also counts what may still be added
    and the waits for a quiet machine before the runs left (`pending`, set by Execution:
    Execution.pending_s), and the step after the runs (`after_s`: the callgrind step), so
    that it is an upper bound rather than a figure that stays put while added runs keep
    coming."""
    pending = None
    after_s = 0.0

    def left(self):
        base = super().left()
        if base is None:
            return base
        return base + (self.pending(base) if self.pending else 0.0) + self.after_s


class Execution:
    """The loop over runs. rows, rounds and series collect the tidy results; `redone` lists
    the disturbed runs done again; `extra` the repetitions added to undecided groups."""

    def __init__(self, name, bdir, hlbench, policy, recf, prog, seed=0):
        self.name, self.bdir, self.hlbench, self.policy = name, bdir, hlbench, policy
        self.recf, self.prog = recf, prog
        self.rows, self.rounds, self.series = [], [], []
        self.redone, self.extra, self.undecided, self.why = [], {}, {}, {}
        self.waiter = load.Waiter(policy)
        self.rng = random.Random(seed)
        self.done = 0
        self.redo_left = 0
        self.lost_s = 0.0       # time of the disturbed runs kept (repeat_undecided)
        self.last = None        # others' CPUs during the run before
        self.deadline = None    # when adding repetitions stops (repeat_undecided), monotonic
        self.stopped = None     # why repetitions stopped (busy_throughout, busy_round)
        self.wait_s = 0.0       # wall time spent before the runs, looking and waiting
        prog.pending = self.pending_s

    def pending_s(self, planned_left):
        """Seconds beyond `planned_left` (the runs queued): what may be added, and the
        waits before the runs left."""
        return self.may_add_s(planned_left) + self.waits_left_s(planned_left)

    def waits_left_s(self, planned_left):
        """The waits before the runs left: the mean wait per run so far, for each run left,
        bounded as load.Waiter bounds them (never more in all than the runs' own time plus
        one quiet_wait); beside a load taken as one that does not stop, a look per run."""
        if not self.done:
            return 0.0
        runs_left = sum(self.prog.remaining.values())
        rate = self.wait_s / self.done
        if self.waiter.persistent():
            rate = min(rate, load.WINDOW_S)
            return rate * runs_left
        allowance = self.waiter.ran_s + planned_left + self.policy.quiet_wait - \
            self.waiter.waited_s
        return min(rate * runs_left, max(0.0, allowance))

    def may_add_s(self, planned_left):
        """Seconds beyond the `planned_left` of the runs already queued that this execution
        may still add: before the added repetitions, the disturbed runs the redo budget may
        redo (at the mean run's length) and the repetitions' own budget (policy.extra_time
        plus the disturbed runs' time so far); while adding them, what is left until their
        deadline (nothing starts after it). Beside a load that has not paused once, the
        repetitions will not be added (busy_throughout), and are not counted: should the
        load pause, the estimate grows by their budget then."""
        if self.deadline is not None:
            return max(0.0, self.deadline - time.monotonic() - planned_left)
        mean = self.waiter.ran_s / self.done if self.done else 0.0
        redo = 0.0 if self.waiter.persistent() else self.redo_left * mean
        extra = 0.0
        if self.policy.extra_time > 0 and not self.waiter.never_quiet():
            extra = self.policy.extra_time + self.disturbed_s()
        return redo + extra

    def disturbed_s(self):
        """Seconds of the disturbed runs kept (not redone): what the verdicts set aside."""
        return sum(r.get("elapsed_s") or 0 for r in self.rows
                   if r.get("load.busy") and r.get("record") == 0)

    def run_one(self, run):
        """Wait for a quiet moment, run, and return the result with its `load`."""
        t0 = time.monotonic()
        before = self.waiter.before(self.done, self.last)
        self.wait_s += time.monotonic() - t0
        probe = load.Probe()
        res = runkit.run_one(run, self.bdir, self.hlbench)
        res["load"] = dict(before, **load.during(probe, self.policy))
        self.last = self.waiter.saw(res["load"]["during_cpus"])
        self.waiter.ran_s += res["elapsed_s"]
        return res

    def record(self, run, res, redone=False):
        for rec in res["records"]:
            self.recf.write(json.dumps({"index": run["index"], "order": self.done,
                                        "variant": run["variant"], "record": rec,
                                        "load": res["load"], "redone": redone}) + "\n")
        self.recf.flush()

    def run_queue(self, queue, deadline=None):
        """Run `queue` (a list, in order); a disturbed run that went ok is put back at a
        random later place while the redo budget lasts. Stops at `deadline` (monotonic)."""
        i = 0
        while i < len(queue):
            if deadline is not None and time.monotonic() >= deadline:
                return False
            run = queue[i]
            self.prog.start(self.done, run)
            res = self.run_one(run)
            # redone while the budget lasts, unless the load does not stop (redoing is vain)
            redo = bool(res["load"]["busy"]) and res["status"] == "ok" and \
                self.redo_left > 0 and not self.waiter.persistent()
            if redo:
                self.redo_left -= 1
                self.redone.append({"index": run["index"], "variant": run["variant"],
                                    "workload_label": run["workload_label"],
                                    "threads": run["threads"], "order": self.done,
                                    "during_cpus": res["load"]["during_cpus"]})
                queue.insert(self.rng.randint(i + 1, len(queue)), run)
                self.prog.add(run)
            else:
                rr, rd = runkit.rows_for(run, res, self.name, self.done, self.bdir, self.series)
                self.rows += rr
                self.rounds += rd
            self.prog.finish(run, res["elapsed_s"], res["status"], res["error"])
            self.record(run, res, redo)
            self.done += 1
            i += 1
        return True

    def run_planned(self, order):
        self.redo_left = int(self.policy.redo_share * len(order))
        self.run_queue(list(order))

    def repeat_undecided(self, runs, ncores):
        """After the planned runs, more repetitions of the groups within noise
        (undecided.repeat)."""
        undecided.repeat(self, runs, ncores)

    def summary(self):
        """meta.json's `load`: the policy, what the waiting, redoing and repeating did."""
        busy = [r for r in self.rows if r.get("load.busy")]
        return {
            "busy_cpus": self.policy.busy_cpus, "quiet_wait_s": self.policy.quiet_wait,
            "redo_share": self.policy.redo_share, "extra_time_s": self.policy.extra_time,
            "extra_lost_s": round(self.lost_s, 1),
            "runs_busy": len({r["index"] for r in busy}),
            "busy_groups": sorted({"%s %s t=%s" % (r["variant"], r["workload_label"],
                                                   r["threads"]) for r in busy}),
            "waited_s": round(self.waiter.waited_s, 1), "runs_waited": self.waiter.runs_waited,
            "gave_up_waiting_at": self.waiter.gave_up, "redone": self.redone,
            "extra_runs": sum(self.extra.values()),
            "extra": ["%s %s t=%d: +%d (%s)" % (g + (n, self.why.get(g, "?")))
                      for g, n in sorted(self.extra.items())],
            "still_undecided": sorted({w for w in self.undecided.values()}),
            "looks": self.waiter.looks, "quiet_looks": self.waiter.quiet_looks,
            "extra_stopped": self.stopped,
        }
