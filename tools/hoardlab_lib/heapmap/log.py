"""A heap log (`heap_log = PATH`, src/core/instruments/heaplog.c) read, and what it shows:
superblocks moving to and from the global heap, a heap that only grows, each heap's role.

The log's lines: `kind t_ns thread heap global class sb from to peer u a live n_0 .. n_{G+1}`,
kind a (a superblock entered the heap; peer: the heap it came from, `-` from the OS), d (it
left), g (it changed fullness group), s (the heap's last state, at exit); u and a: the heap's
bytes in use and held, live: the process's bytes in use (U, as published); n_i: superblocks
in list i after the event (groups 0 .. G-1, G full, G+1 empty)."""
import collections

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
