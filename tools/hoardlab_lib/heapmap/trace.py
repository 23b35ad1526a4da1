"""A heap log exported as a Chrome trace-event file (Perfetto, chrome://tracing): a track per
heap with its counters, the moves between heaps as events."""
import json
import os

from .log import global_heaps, moves, read, released, series

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
