"""The other load on the machine, seen per run, and waited out before it.

Other processes' CPU use over an interval is the machine's busy time in /proc/stat (all
CPUs, every process, no root needed) minus what this process and its finished children
used (os.times: the sweep itself and the run it waited for), divided by the interval's wall
time: "others used 0.9 CPUs" means another process kept most of one core busy. A run's own
CPU time is its children's share of os.times, exact (rusage), beside its wall time.

/proc/stat counts in scheduler ticks (USER_HZ, 100 a second), so over a 0.1 s run on two
cores the reading is good to about 0.2 CPUs: the default threshold, half a CPU, is well
above that and below one CPU-bound competitor."""
import collections
import os
import time

BUSY_CPUS = 0.5         # others' CPU use above this (in CPUs) makes a run disturbed
QUIET_WAIT_S = 5.0      # the longest a run waits for the others' load to fall below it
REDO_SHARE = 0.1        # at most this share of the planned runs is redone when disturbed
WINDOW_S = 0.05         # the look before a run after a busy one (/proc/stat resolves it)
WAIT_STEP_S = 0.25      # while waiting: the length of each look
GIVE_UP_AFTER = 3       # quiet_waits' worth of busy looks in a row: the load does not stop

# The sweep's settings of load (a [sweep] key and a command-line option each, see values.py
# and cli.py): threshold in CPUs, the per-run wait in seconds, the share of planned runs
# that may be redone, and the seconds that repetitions of undecided groups may add.
Policy = collections.namedtuple("Policy", "busy_cpus quiet_wait redo_share extra_time")
DEFAULT = Policy(BUSY_CPUS, QUIET_WAIT_S, REDO_SHARE, 0.0)


def busy_s():
    """The machine's busy CPU seconds so far (every CPU, /proc/stat's first line: all but
    idle and iowait); None where there is no /proc/stat."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    ticks = [int(x) for x in fields[1:]]
    idle = sum(ticks[3:5])
    # guest time is counted inside user and nice already
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def own_s():
    """CPU seconds of this process and of the children it has waited for: (self, children)."""
    t = os.times()
    return t.user + t.system, t.children_user + t.children_system


class Probe:
    """A reading at one moment; others() gives the load of other processes since then."""

    def __init__(self):
        self.t = time.monotonic()
        self.busy = busy_s()
        self.own, self.children = own_s()

    def others(self):
        """(others' CPUs since the reading, its wall seconds, children's CPU seconds)."""
        wall = time.monotonic() - self.t
        own, children = own_s()
        child = children - self.children
        busy = busy_s()
        if busy is None or self.busy is None or wall <= 0:
            return None, wall, child
        mine = (own - self.own) + child
        return max(0.0, (busy - self.busy - mine) / wall), wall, child


def look(seconds, sleep=time.sleep):
    """Others' CPUs over the next `seconds`."""
    p = Probe()
    sleep(seconds)
    return p.others()[0]


class Waiter:
    """Before each run: wait up to policy.quiet_wait seconds for others' load to fall below
    policy.busy_cpus, looking in steps, and never more in all than the runs took (ran_s).
    When the looks have seen the machine busy, without a quiet one between them, for
    GIVE_UP_AFTER times quiet_wait seconds in all (`busy_streak_s`), the load is taken as
    one that does not stop: runs then only look (and `gave_up` says when), until a look
    finds the machine quiet again. Counted in seconds, not in runs: early in a sweep the
    allowance cuts waits short, and counting three short waits in vain took a load that
    comes and goes (busy 3 s, idle 3 s) for one that never stops after 8 runs."""

    def __init__(self, policy, sleep=time.sleep):
        self.policy, self.sleep = policy, sleep
        self.busy_streak_s, self.gave_up, self.waited_s = 0.0, None, 0.0
        self.runs_waited = 0
        self.ran_s = 0.0        # the runs' own time so far (Execution adds it)
        self.limit = None       # the longest the last run could have waited, s
        self.looks, self.quiet_looks = 0, 0     # every reading of others' load, and quiet ones

    def saw(self, cpus):
        """Count one reading of others' load (a look before a run, or a run's own reading);
        returns cpus."""
        if cpus is not None:
            self.looks += 1
            self.quiet_looks += cpus <= self.policy.busy_cpus
        return cpus

    def never_quiet(self):
        """Whether other processes kept the CPUs busy throughout: every reading so far saw
        them above the threshold. Then no quiet run has been made, none will be while it
        lasts, and a verdict waiting for quiet runs cannot be decided by more of them."""
        return self.looks > 0 and self.quiet_looks == 0

    def persistent(self):
        """Whether the load is taken as one that does not stop."""
        return self.busy_streak_s >= GIVE_UP_AFTER * self.policy.quiet_wait

    def before(self, done=0, last=None):
        """{'before_cpus', 'waited_s'} for the run about to start (`done` runs so far).
        `last`: others' CPUs during the run just before; when it was quiet that reading
        stands for "just before" and costs nothing (an idle machine pays no look)."""
        if last is not None and last <= self.policy.busy_cpus:
            self.busy_streak_s = 0.0
            return {"before_cpus": last, "waited_s": 0.0}
        t0 = time.monotonic()
        cpus = self.saw(look(WINDOW_S, self.sleep))
        # waiting never takes longer than the runs themselves (plus one wait): a sweep beside
        # a load that comes and goes lasts at most about twice as long as on an idle machine
        allowance = self.ran_s + self.policy.quiet_wait - self.waited_s
        limit = 0.0 if self.persistent() else max(0.0, min(self.policy.quiet_wait, allowance))
        self.limit = limit
        while cpus is not None and cpus > self.policy.busy_cpus and \
                time.monotonic() - t0 < limit:
            cpus = self.saw(look(WAIT_STEP_S, self.sleep))
        waited = time.monotonic() - t0
        quiet = cpus is None or cpus <= self.policy.busy_cpus
        if quiet:
            self.busy_streak_s = 0.0
        else:
            self.busy_streak_s += waited
            if self.persistent() and self.gave_up is None:
                self.gave_up = done
        if waited > 2 * WINDOW_S:
            self.waited_s += waited
            self.runs_waited += 1
        return {"before_cpus": _round(cpus), "waited_s": round(waited, 3)}


def during(probe, policy):
    """The load columns of a run measured since `probe`: others' CPUs during it, its own CPU
    seconds, and whether it was disturbed (others above the threshold)."""
    cpus, _, child = probe.others()
    return {"during_cpus": _round(cpus), "cpu_s": round(child, 4),
            "busy": int(cpus is not None and cpus > policy.busy_cpus)}


def _round(x):
    return None if x is None else round(x, 3)
