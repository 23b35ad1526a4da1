"""The heap over time, from a heap log (`heap_log = PATH`, src/core/instruments/heaplog.c): read it, decide
what it shows (superblocks moving to and from the global heap, a heap that only grows), draw
the heap map (heaps x time, coloured by fullness: bytes in use over bytes held) as a PNG, and
export it as a Chrome trace-event file (Perfetto, chrome://tracing).

The log's lines: `kind t_ns thread heap global class sb from to peer u a live n_0 .. n_{G+1}`,
kind a (a superblock entered the heap; peer: the heap it came from, `-` from the OS), d (it
left), g (it changed fullness group), s (the heap's last state, at exit); u and a: the heap's
bytes in use and held, live: the process's bytes in use (U, as published); n_i: superblocks
in list i after the event (groups 0 .. G-1, G full, G+1 empty)."""
import collections
import json
import os

from . import common, plotkit, runkit
from .common import ToolError

Line = collections.namedtuple("Line",
                              "kind t thread heap glob cls sb src dst peer u a live counts")
Log = collections.namedtuple("Log", "groups interval_ms dropped lines")
Move = collections.namedtuple("Move", "t thread sb cls src dst to_global from_global")
NFIELDS = 13
MIN_GROWTH = 32          # superblocks a heap must take to count as growing (a thread's
                         # first superblock of each size class is not growth)
BLOWUP = 2.0             # ... and gain this many times the change of the live bytes


def _opt(text):
    return None if text == "-" else int(text)


def parse(text):
    """A Log from the text of a heap log; lines of another shape (one cut at exit) skipped."""
    groups, interval, dropped, lines = 0, 0, 0, []
    for raw in text.splitlines():
        f = raw.split()
        if raw.startswith("# pid"):
            head = dict(zip(f[1::2], f[2::2]))
            groups, interval = int(head["groups"]), int(head["interval_ms"])
            dropped = int(head["dropped"])
            continue
        if not f or raw.startswith("#") or len(f) != NFIELDS + groups + 2:
            continue
        try:
            lines.append(Line(f[0], int(f[1]), int(f[2]), int(f[3]), f[4] == "1", int(f[5]),
                              int(f[6], 16), _opt(f[7]), _opt(f[8]), _opt(f[9]), int(f[10]),
                              int(f[11]), int(f[12]), tuple(int(x) for x in f[NFIELDS:])))
        except ValueError:
            continue
    lines.sort(key=lambda ln: ln.t)      # stable: one heap's lines keep their order
    return Log(groups, interval, dropped, lines)


def read(path):
    with open(path) as f:
        return parse(f.read())


def global_heaps(log):
    return {ln.heap for ln in log.lines if ln.glob}


def moves(log):
    """Superblocks that went from one heap to another: an attach line naming its peer."""
    glob = global_heaps(log)
    return [Move(ln.t, ln.thread, ln.sb, ln.cls, ln.peer, ln.heap,
                 ln.heap in glob and ln.peer not in glob, ln.peer in glob and ln.heap not in glob)
            for ln in log.lines if ln.kind == "a" and ln.peer is not None and ln.peer != ln.heap]


def released(log):
    """Detach lines that no attach of the same superblock follows: given back to the OS."""
    out, pending = [], {}
    for ln in log.lines:
        if ln.kind == "d":
            if ln.sb in pending:
                out.append(pending[ln.sb])
            pending[ln.sb] = ln
        elif ln.kind == "a":
            pending.pop(ln.sb, None)
    return out + list(pending.values())


def series(log):
    """{heap: [Line, ...]} in time order."""
    by = collections.defaultdict(list)
    for ln in log.lines:
        by[ln.heap].append(ln)
    return dict(by)


def only_grows(lines):
    """A heap's lines say it only grows: it never gave a superblock away, its held bytes never
    fell, it took at least MIN_GROWTH superblocks, and its held bytes grew by more than BLOWUP
    times the change of the whole process's live bytes over its life (no live bytes seen, as
    with counting = off: undecided, False). A heap that reuses what its threads free grows
    with their live bytes (private on threadtest); one whose blocks are freed onto other
    heaps grows while they stay put (private on producer-consumer: the paper's unbounded
    blowup). Not a rule on time: a loaded machine stretches a run's phases, not its bytes."""
    held = [ln.a for ln in lines]
    live = [ln.live for ln in lines]
    kinds = [ln.kind for ln in lines]
    return ("d" not in kinds and kinds.count("a") >= MIN_GROWTH and max(live) > 0
            and all(b >= a for a, b in zip(held, held[1:]))
            and held[-1] - held[0] > BLOWUP * (max(live) - min(live)))


def facts(log):
    """What the log shows, for the targets and the report: moves to and from the global
    heap, superblocks given back to the OS, the heaps that only grew, and per heap the
    peak superblocks and held bytes."""
    ms = moves(log)
    by = series(log)
    glob = global_heaps(log)
    return {
        "lines": len(log.lines), "dropped": log.dropped, "heaps": sorted(by),
        "global_heaps": sorted(glob),
        "to_global": sum(m.to_global for m in ms), "from_global": sum(m.from_global for m in ms),
        "between_heaps": len(ms), "to_os": len(released(log)),
        "only_growing": sorted(h for h, lines in by.items()
                               if h not in glob and only_grows(lines)),
        "peak_superblocks": {h: max(sum(ln.counts) for ln in lines) for h, lines in by.items()},
        "peak_held": {h: max(ln.a for ln in lines) for h, lines in by.items()},
        "owner": {h: collections.Counter(ln.thread for ln in lines).most_common(1)[0][0]
                  for h, lines in by.items() if h not in glob},
        "stranded": {h: (lines[-1].u, lines[-1].live) for h, lines in by.items()
                     if h not in glob and lines[-1].live > 0 and lines[-1].u > lines[-1].live},
    }


def label(h, f):
    """A heap's name with its role: 'global 0', or 'heap 3 (thread 1)'."""
    if h in f["global_heaps"]:
        return "global %d" % h
    owner = (f.get("owner") or {}).get(h)
    return "heap %d" % h + (" (thread %d)" % owner if owner is not None else "")


def roles(f):
    """Each heap's role in a sentence: the global heap; the thread that uses a heap, and what
    its colour means when the heap counts in use more than the whole process has live (a
    block freed by another thread went to that thread's heap: free, but unusable to this
    one, which still counts it)."""
    out = ["global %d: the global heap (superblocks the others gave back)" % h
           for h in f["global_heaps"]]
    for h in sorted(f.get("owner") or {}):
        text = "%s: thread %d's heap" % ("heap %d" % h, f["owner"][h])
        if h in f["only_growing"]:
            text += ", only grew"
        if h in (f.get("stranded") or {}):
            u, live = f["stranded"][h]
            text += (" — counts %.1f MiB in use while the whole process had %.1f MiB live: its "
                     "'full' is blocks another thread freed, free but unusable to it"
                     % (u / 2 ** 20, live / 2 ** 20))
        out.append(text)
    return out


def drains_to_global(f):
    """The target for hoard on a drain: superblocks moved to the global heap."""
    return f["to_global"] > 0


def has_growing_heap(f):
    """The target for private on producer-consumer: a heap that only grows (blowup)."""
    return bool(f["only_growing"])


def summary(f):
    """One line of facts (and the note of a log cut at its cap)."""
    return ("%d lines; moves to the global heap %d, from it %d, between other heaps %d; "
            "to the OS %d; heaps that only grew: %s%s" % (
                f["lines"], f["to_global"], f["from_global"],
                f["between_heaps"] - f["to_global"] - f["from_global"], f["to_os"],
                ", ".join("heap %d (%d superblocks)" % (h, f["peak_superblocks"][h])
                          for h in f["only_growing"]) or "none",
                "; " + f["note"] if f.get("note") else ""))


# ---- the heap map (PNG) ---------------------------------------------------------------------

BINS = 300               # time columns of the map
MAX_ROWS = 48            # heaps drawn: the global heaps, then those holding the most


def rows_of(log, f):
    """The heaps drawn, top down: global heaps, then the others by number (the MAX_ROWS
    holding the most at their peak)."""
    glob = f["global_heaps"]
    rest = sorted((h for h in f["heaps"] if h not in glob), key=lambda h: -f["peak_held"][h])
    return glob + sorted(rest[:MAX_ROWS - len(glob)])


def grid(log, rows, t_end):
    """Fullness (u / a) of each heap at the end of each time column; None where it holds
    nothing or has no line yet."""
    by = series(log)
    out = []
    for h in rows:
        lines, i, last, cells = by.get(h, []), 0, None, []
        for b in range(BINS):
            edge = (b + 1) * t_end / BINS
            while i < len(lines) and lines[i].t <= edge:
                last, i = lines[i], i + 1
            cells.append(last.u / last.a if last is not None and last.a else None)
        out.append(cells)
    return out


def _marks(ax, log, rows, ms_per_ns):
    """Moves on the map: into the global heap (v), out of it (^), between other heaps (o),
    to the OS (x), each on the row of the heap it went to (the OS: it left)."""
    where = {h: i for i, h in enumerate(rows)}
    kinds = (("to the global heap", "v", "tab:red", lambda m: m.to_global),
             ("from the global heap", "^", "white", lambda m: m.from_global),
             ("between heaps", "o", "tab:orange", lambda m: not (m.to_global or m.from_global)))
    ms = moves(log)
    for label, marker, colour, pick in kinds:
        pts = [(m.t * ms_per_ns, where[m.dst]) for m in ms if pick(m) and m.dst in where]
        if pts:
            ax.scatter(*zip(*pts), marker=marker, s=14, c=colour, edgecolors="black",
                       linewidths=0.3, label="%s (%d)" % (label, len(pts)), zorder=3)
    pts = [(ln.t * ms_per_ns, where[ln.heap]) for ln in released(log) if ln.heap in where]
    if pts:
        ax.scatter(*zip(*pts), marker="x", s=14, c="black", linewidths=0.6,
                   label="to the OS (%d)" % len(pts), zorder=3)


def draw(log_path, png_path, title=None):
    """The heap map of a heap log as a PNG: heaps x time coloured by fullness, the moves
    marked, and below it each heap's superblocks over time. Returns the log's facts."""
    log = read(log_path)
    f = facts(log)
    plt = plotkit.plt()
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True, layout="constrained",
                                  gridspec_kw={"height_ratios": [3, 2]})
    rows = rows_of(log, f)
    t_end = max([ln.t for ln in log.lines] + [1])
    ms_per_ns = 1e-6
    cells = grid(log, rows, t_end)
    cmap = plt.get_cmap("viridis").with_extremes(bad="#eeeeee")   # grey: holds nothing
    data = [[float("nan") if c is None else c for c in row] for row in cells] or [[float("nan")]]
    im = ax.imshow(data, aspect="auto", interpolation="nearest", cmap=cmap, vmin=0, vmax=1,
                   extent=(0, t_end * ms_per_ns, len(rows) - 0.5, -0.5))
    # beside both panels, so that their time axes stay aligned
    fig.colorbar(im, ax=(ax, ax2), label="fullness (top): bytes the heap counts in use / "
                 "held;\n'full' may be blocks another thread freed (caption)", pad=0.01,
                 fraction=0.04)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([label(h, f) + (" *" if h in f["stranded"] else "") for h in rows],
                       fontsize=6 if len(rows) > 16 else 8)
    _marks(ax, log, rows, ms_per_ns)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="upper right", framealpha=0.8)
    plotkit.title(ax, title or "Heap map: " + os.path.basename(log_path))
    if f["stranded"]:
        ax.set_xlabel("* counts more in use than the process has live: its 'full' is blocks "
                      "another thread freed, free but unusable to it", fontsize=7)
    for h in rows[:10]:
        lines = series(log).get(h, [])
        ax2.step([ln.t * ms_per_ns for ln in lines], [sum(ln.counts) for ln in lines],
                 where="post", label=label(h, f))
    ax2.set_xlabel("time (ms)")
    ax2.set_ylabel("superblocks held")
    ax2.set_ylim(bottom=0)
    if rows:
        ax2.legend(fontsize=7, loc="upper left", ncol=2, framealpha=0.8)
    fig.savefig(png_path, dpi=110)
    plt.close(fig)
    return f


# ---- Chrome trace-event export ------------------------------------------------------------

PID = 1                  # one process: hoardlab's heaps, a track (tid) each
COUNTER_STEPS = 4000     # a heap's counters: its last line in each of this many time steps


def _name(h, glob):
    return ("global heap %d" if h in glob else "heap %d") % h


def counter_lines(log):
    """Each heap's last line in each of COUNTER_STEPS steps of the run, in time order: a
    per-event log of a long run has millions of lines, more than a trace viewer loads."""
    step = max(log.lines[-1].t, 1) / COUNTER_STEPS if log.lines else 1
    last = {}
    for ln in log.lines:
        last[ln.heap, int(ln.t // step)] = ln
    return sorted(last.values(), key=lambda ln: ln.t)


def trace_events(log, label=""):
    """The log as Chrome trace events (the JSON Object Format's traceEvents): a track per
    heap; on it counters of held and in-use bytes and of superblocks per fullness group;
    each move between heaps a slice on both tracks joined by a flow arrow; a superblock
    given back to the OS an instant event. ts in microseconds; counters thinned to
    counter_lines."""
    glob = global_heaps(log)
    names = ["g%d" % i for i in range(log.groups)] + ["full", "empty"]
    ev = [{"name": "process_name", "ph": "M", "ts": 0, "pid": PID, "tid": 0,
           "args": {"name": "hoardlab heaps" + (" (%s)" % label if label else "")}}]
    for h in sorted(series(log)):
        ev.append({"name": "thread_name", "ph": "M", "ts": 0, "pid": PID, "tid": h,
                   "args": {"name": _name(h, glob)}})
        ev.append({"name": "thread_sort_index", "ph": "M", "ts": 0, "pid": PID, "tid": h,
                   "args": {"sort_index": h if h not in glob else -1000 + h}})
    for ln in counter_lines(log):
        ts = ln.t / 1000.0
        ev.append({"name": _name(ln.heap, glob) + " bytes", "ph": "C", "ts": ts, "pid": PID,
                   "tid": ln.heap, "args": {"held": ln.a, "in_use": ln.u}})
        ev.append({"name": _name(ln.heap, glob) + " superblocks", "ph": "C", "ts": ts,
                   "pid": PID, "tid": ln.heap, "args": dict(zip(names, ln.counts))})
    for k, m in enumerate(moves(log)):
        ts, args = m.t / 1000.0, {"superblock": "%#x" % m.sb, "class": m.cls, "thread": m.thread}
        ev.append({"name": "to " + _name(m.dst, glob), "cat": "move", "ph": "X", "ts": ts,
                   "dur": 1, "pid": PID, "tid": m.src, "args": args})
        ev.append({"name": "from " + _name(m.src, glob), "cat": "move", "ph": "X", "ts": ts,
                   "dur": 1, "pid": PID, "tid": m.dst, "args": args})
        ev.append({"name": "superblock move", "cat": "move", "ph": "s", "id": k, "ts": ts,
                   "pid": PID, "tid": m.src})
        ev.append({"name": "superblock move", "cat": "move", "ph": "f", "bp": "e", "id": k,
                   "ts": ts, "pid": PID, "tid": m.dst})
    for ln in released(log):
        ev.append({"name": "to the OS", "cat": "move", "ph": "i", "s": "t", "ts": ln.t / 1000.0,
                   "pid": PID, "tid": ln.heap, "args": {"superblock": "%#x" % ln.sb}})
    return ev


def export_trace(log_path, json_path, label=""):
    """Write the Chrome trace-event JSON file of a heap log; returns its path."""
    doc = {"traceEvents": trace_events(read(log_path), label), "displayTimeUnit": "ms",
           "otherData": {"source": os.path.basename(log_path), "tool": "hoardlab heapmap"}}
    with open(json_path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
    return json_path


# ---- `hoardlab heapmap`: run a workload with the log on, draw it, export it ------------------

HEAP_STRATEGIES = ("private", "ownership", "hoard", "hoard2026", "hoard202607")
# `hoardlab heapmap`'s defaults: phased (a program's phases: grow, shrink, grow again) at 4
# threads, scale 0.2: about 3 s and a 10 MB log on an idle machine (scale 1 took 2.5 minutes
# and wrote 463 MB beside another user's builds)
WORKLOAD, THREADS, SCALE = "phased", 4, 0.2
TIMEOUT = 600            # seconds for the run
LOG_CAP = 64 << 20       # bytes of the log read and kept; beyond, cut with a note


def cap_log(path, cap=LOG_CAP):
    """Cut the log at `path` to its first `cap` bytes (whole lines), so a long run's log
    neither fills the disk nor the memory of the map; returns a note, or None if it fit."""
    size = os.path.getsize(path)
    if size <= cap:
        return None
    with open(path, "rb+") as f:
        head = f.read(cap)
        f.seek(0)
        f.truncate(head.rfind(b"\n") + 1)
    return ("the log reached its cap of %d MiB (%.0f MiB written) and was cut there: the map "
            "shows the run's start; a larger --interval or a smaller --scale shows all of it"
            % (cap >> 20, size / 2 ** 20))


def run(bdir, allocator, workload, out_dir, threads=THREADS, params=None, interval=0,
        scale=SCALE, seed=42, timeout=TIMEOUT, extra=(), quiet=False):
    """Run hlbench WORKLOAD under allocator (a heap strategy, with knobs) with heap_log on;
    write out_dir/heapmap-ALLOCATOR-WORKLOAD-Nt.{log,png,json}. Returns (paths, facts).
    Says what it does as it goes (on stderr) unless quiet; the log kept at most LOG_CAP."""
    say = (lambda msg: None) if quiet else (lambda msg: common.log("heapmap: " + msg))
    base, knobs = common.parse_allocator_spec(allocator)
    only = ToolError("heapmap -a %s: the heap log is kept by the heap strategies only: %s"
                     % (allocator, ", ".join(HEAP_STRATEGIES)))
    if common.allocator_kind(base) != "hoardlab":
        raise only
    runkit.check_allocator(bdir, base, knobs, [n for n, _ in common.hlconfig_strategies(bdir)],
                    "heapmap -a %s" % allocator)
    if common.expected_strategy(base, knobs) not in HEAP_STRATEGIES:   # a row: its file's
        raise only
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.join(out_dir, plotkit.fname("heapmap-%s-%s-%dt" % (allocator, workload,
                                                                      threads)))
    paths = {k: stem + "." + k for k in ("log", "png", "json")}
    knobs.update({"heap_log": os.path.abspath(paths["log"]),
                  "heap_log_interval": str(int(interval))})
    spec = {"index": 0, "allocator": base, "variant": allocator, "base": base,
            "kind": "hoardlab", "knobs": knobs, "swept": {}, "workload_label": workload,
            "workload": workload, "params": dict(params or {}), "threads": threads,
            "scale": scale, "seed": seed, "repetition": 0, "pin": False, "timeout": timeout,
            "extra_args": list(extra)}
    say("running %s under %s, %d threads, scale %g, the heap log on (stopped after %ds)"
        % (workload, allocator, threads, scale, timeout or 0))
    res = runkit.run_one(spec, bdir)
    if res["status"] != "ok":
        raise ToolError("heapmap: %s under %s: %s (%s)" % (workload, allocator, res["status"],
                                                          res["error"].strip()[-300:]))
    if not os.path.exists(paths["log"]):
        raise ToolError("heapmap: %s under %s wrote no heap log %s"
                        % (workload, allocator, paths["log"]))
    note = cap_log(paths["log"])
    if note:
        say(note)
    say("ran in %.1f s; drawing the map from a %.1f MiB log" % (
        res["elapsed_s"], os.path.getsize(paths["log"]) / 2 ** 20))
    name = "%s on %s, %d threads" % (allocator, workload, threads)
    f = draw(paths["log"], paths["png"], "Heap map: " + name)
    if f["dropped"]:
        note = "; ".join(x for x in (note, "the library's log buffer was full: %d lines "
                                     "dropped" % f["dropped"]) if x)
    f["note"] = note
    say("exporting the Chrome trace")
    export_trace(paths["log"], paths["json"], name)
    return paths, f
