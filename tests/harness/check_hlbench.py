#!/usr/bin/env python3
"""Drive hlbench and check what it writes against harness/README.md.

    check_hlbench.py run    HLBENCH HEADER [--preload LIB --strategy S] [--env K=V]...
                            [--census zero|positive] [--deadlock expected|any]
                            [--timeout SECONDS] -- WORKLOAD ARGS...
    check_hlbench.py replay HLBENCH HEADER [--preload LIB --strategy S] --record-lib LIB
    check_hlbench.py cli    HLBENCH
    check_hlbench.py sampling HLBENCH
    check_hlbench.py hlrun  HLRUN
    check_hlbench.py learned HLBENCH HEADER --record-lib LIB
    check_hlbench.py broken HLBENCH BROKEN_MALLOC_LIB -- WORKLOAD ARGS...
    check_hlbench.py planted HLBENCH -- drain ARGS...

Exit status 0 when every check holds; otherwise the failed check on stderr and status 1.

signal-malloc may end in a deadlock its watchdog reports: that record (the last; later
--repeat runs do not happen) has extra.deadlocked true and hoardlab null. --deadlock expected
requires it (the watchdog's own record, written without malloc, is what is tested); any
accepts either outcome. A run that does not end within --timeout fails.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

KEYS = ["schema", "workload", "label", "strategy", "threads", "seed", "scale", "repeat",
        "pinned", "spawn_first", "params", "wall_s", "ops", "throughput", "peak_rss_kb", "cache_line",
        "cores", "huge_coverage", "anon_huge_kb", "hoardlab", "extra"]
# The one list of workloads, HB_WORKLOADS in harness/hlbench.h: `X("name", ...` lines.
HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "harness",
                      "hlbench.h")
WORKLOADS = [line.strip().split('"')[1] for line in open(HEADER)
             if line.strip().startswith('X("')]


def fail(msg):
    sys.stderr.write("check_hlbench: FAIL: %s\n" % msg)
    sys.exit(1)


def expect(cond, msg):
    if not cond:
        fail(msg)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return (isinstance(v, (int, float))) and not isinstance(v, bool)


def stats_fields(header):
    """Every statistic of HOARDLAB_STATS(X) in include/hoardlab.h."""
    text = open(header).read()
    block = text[text.index("#define HOARDLAB_STATS(X)"):text.index("struct hoardlab_stats")]
    return re.findall(r"X\(\s*(\w+)\s*,", block)


def run(cmd, env, timeout=300):
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        fail("%s did not end within %g s" % (" ".join(cmd), timeout))
    if p.returncode != 0:
        fail("%s exited %d\nstderr: %s" % (" ".join(cmd), p.returncode, p.stderr[-2000:]))
    return p.stdout


def listed_params(hlbench, workload):
    out = subprocess.run([hlbench, "--list"], stdout=subprocess.PIPE, text=True).stdout
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.split(" ")[0] == workload:
            return re.findall(r"--(\w+)", lines[i + 1])
    fail("%s is not in hlbench --list" % workload)


SERIES_COLUMNS = ["t_s", "held_bytes", "in_use_bytes", "self_bytes", "rss_kb", "private_dirty_kb",
                  "lazyfree_kb", "anonymous_kb", "anon_huge_kb"]
LATENCY_KEYS = ["samples", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"]


def check_latency_summary(s, what):
    """{"samples", "p50_ns", ..., "max_ns"}: percentiles ordered, null exactly when empty."""
    expect(isinstance(s, dict) and list(s) == LATENCY_KEYS, "%s keys %r" % (what, s))
    expect(is_int(s["samples"]) and s["samples"] >= 0, "%s samples %r" % (what, s["samples"]))
    values = [s[k] for k in LATENCY_KEYS[1:]]
    if s["samples"] == 0:
        expect(all(v is None for v in values), "%s: percentiles without samples" % what)
    else:
        expect(all(is_num(v) and v >= 0 for v in values), "%s: %r" % (what, s))
        expect(values == sorted(values), "%s percentiles not ordered: %r" % (what, values))


def check_latency(lat, every):
    expect(isinstance(lat, dict) and list(lat) == ["sample_every", "clock", "overhead_ns",
                                                  "malloc", "free"], "latency keys %r" % lat)
    expect(lat["sample_every"] == every, "sample_every %r, expected %d" % (lat["sample_every"], every))
    expect(lat["clock"] in ("rdtsc", "clock_gettime"), "clock %r" % lat["clock"])
    expect(is_num(lat["overhead_ns"]) and lat["overhead_ns"] >= 0, "overhead_ns %r" % lat)
    for k in ("malloc", "free"):
        check_latency_summary(lat[k], "latency." + k)


def check_series(ser, strategy):
    """Rows in increasing time, one value per column, hoardlab's exactly when it is loaded."""
    expect(isinstance(ser, dict) and list(ser) == ["interval_s", "columns", "rows"],
           "series keys %r" % ser)
    expect(isinstance(ser["interval_s"], float) and ser["interval_s"] > 0, "interval_s")
    expect(ser["columns"] == SERIES_COLUMNS, "series columns %r" % ser["columns"])
    rows = ser["rows"]
    expect(isinstance(rows, list) and len(rows) >= 1, "series without rows")
    expect(len(rows) <= 257, "series of %d rows: the buffer keeps at most 256 + the last"
           % len(rows))
    last = -1.0
    for row in rows:
        expect(isinstance(row, list) and len(row) == len(SERIES_COLUMNS), "series row %r" % row)
        expect(isinstance(row[0], float) and row[0] > last, "series t_s not increasing: %r" % rows)
        last = row[0]
        for v in row[1:4]:
            expect(is_int(v) and v >= 0 if strategy else v is None,
                   "series hoardlab column %r under %s" % (v, strategy))
        for v in row[4:]:
            expect(v is None or (is_int(v) and v >= 0), "series smaps column %r" % v)
        expect(row[4] is not None and row[4] > 0, "series rss_kb %r" % row[4])


def check_record(rec, workload, strategy, fields, hlbench, latency_every=64, sampling=True):
    # "latency" and "series" follow "extra" unless turned off; the record signal-malloc's
    # watchdog writes without malloc has neither.
    keys = KEYS
    if not (workload == "signal-malloc" and rec.get("extra", {}).get("deadlocked") is True):
        keys = KEYS + (["latency"] if latency_every else []) + (["series"] if sampling else [])
    expect(list(rec.keys()) == keys, "record keys %s, expected %s" % (list(rec), keys))
    if "latency" in keys:
        check_latency(rec["latency"], latency_every)
    if "series" in keys:
        check_series(rec["series"], strategy)
    expect(rec["schema"] == 1, "schema %r" % rec["schema"])
    expect(rec["workload"] == workload, "workload %r" % rec["workload"])
    expect(isinstance(rec["label"], str), "label not a string")
    expect(rec["strategy"] == strategy, "strategy %r, expected %r" % (rec["strategy"], strategy))
    extra = rec["extra"]
    expect(isinstance(extra, dict), "extra not an object")
    deadlocked = workload == "signal-malloc" and extra.get("deadlocked") is True
    for k in ("threads", "seed", "repeat", "ops", "peak_rss_kb", "cache_line", "cores"):
        expect(is_int(rec[k]) and rec[k] >= 0, "%s = %r is not a count" % (k, rec[k]))
    expect(rec["threads"] >= 1 and rec["cores"] >= 1 and rec["cache_line"] >= 16, "topology")
    expect(rec["ops"] > 0 or deadlocked, "no operations counted")
    expect(rec["peak_rss_kb"] > 0, "peak_rss_kb is 0")
    for k in ("scale", "wall_s", "throughput"):
        expect(isinstance(rec[k], float) and rec[k] >= 0, "%s = %r is not a float" % (k, rec[k]))
    expect(isinstance(rec["pinned"], bool), "pinned not a bool")
    expect(is_int(rec["spawn_first"]) and rec["spawn_first"] >= 0, "spawn_first not a count")
    # huge-page coverage (issue 50): AnonHugePages / Rss at the end of the phase, under any allocator
    cov, huge = rec["huge_coverage"], rec["anon_huge_kb"]
    expect(cov is None or (isinstance(cov, float) and 0 <= cov <= 1), "huge_coverage %r" % cov)
    expect(huge is None or (is_int(huge) and huge >= 0), "anon_huge_kb %r" % huge)
    expect((cov is None) == (huge is None) or cov is None, "huge_coverage without anon_huge_kb")
    params = rec["params"]
    expect(isinstance(params, dict), "params not an object")
    expect(sorted(params) == sorted(listed_params(hlbench, workload)),
           "params %s differ from hlbench --list" % sorted(params))
    for k, v in params.items():
        expect(is_num(v) or isinstance(v, str), "param %s = %r" % (k, v))
    h = rec["hoardlab"]
    if strategy is None or deadlocked:      # a deadlocked allocator's statistics are not read
        expect(h is None, "hoardlab statistics without libhoardlab")
    else:
        expect(isinstance(h, dict), "hoardlab statistics missing under libhoardlab")
        ratios = ["fragmentation", "fragmentation_os"]
        expect(list(h) == fields + ratios,
               "hoardlab keys %s, expected %s + %s" % (list(h), fields, ratios))
        for f in fields:
            expect(is_int(h[f]) and h[f] >= 0, "hoardlab.%s = %r" % (f, h[f]))
            # a gauge reported as its change over the phase wraps below 0 (record.c)
            expect(h[f] < 2 ** 63, "hoardlab.%s = %r: a change below 0" % (f, h[f]))
        for f in ratios:
            expect(h[f] is None or (isinstance(h[f], float) and h[f] > 0), "%s %r" % (f, h[f]))
        expect(h["in_use_peak"] > 0 and h["os_bytes_peak"] >= h["os_bytes"], "U/A levels")
        expect(h["os_bytes"] == h["held_bytes"] + h["meta_bytes"] and
               h["held_bytes_peak"] >= h["held_bytes"] and
               h["os_bytes_peak"] >= h["held_bytes_peak"], "A: held + meta = os, peaks")
    if workload.startswith("blowup-"):
        rounds = extra.get("rounds")
        expect(isinstance(rounds, list) and len(rounds) == params["rounds"],
               "extra.rounds has %s entries, params.rounds is %s"
               % (len(rounds) if isinstance(rounds, list) else rounds, params["rounds"]))
        for i, r in enumerate(rounds):
            expect(sorted(r) == ["lazyfree_kb", "live_bytes", "os_bytes", "round", "rss_kb"],
                   "round keys %s" % r)
            expect(r["lazyfree_kb"] is None or is_int(r["lazyfree_kb"]), "lazyfree %r" % r)
            expect(r["round"] == i and is_int(r["live_bytes"]) and r["live_bytes"] > 0, "round %s" % r)
            expect((r["os_bytes"] is None) == (strategy is None), "os_bytes %r" % r["os_bytes"])
            expect(is_int(r["rss_kb"]), "rss_kb %r" % r["rss_kb"])
        expect(is_int(extra.get("floor_kb")) and extra["floor_kb"] > 0, "floor_kb %r" % extra)
    if workload in ("active-false", "passive-false"):
        keys = ("census_false_blocks", "census_false_lines", "census_blocks")
        if params.get("census"):
            expect(all(is_int(extra.get(k)) for k in keys) and extra["census_blocks"] ==
                   rec["threads"] * params["objects"] + (rec["threads"] if workload ==
                                                         "passive-false" else 0),
                   "census from outside %r" % extra)
        else:
            expect(not any(k in extra for k in keys), "census keys without census: %r" % extra)
    if workload == "xfree":
        expect(extra.get("frees") == rec["ops"] and extra["producers"] == rec["threads"] ==
               extra["consumers"], "xfree extra %r" % extra)
        for k in ("a_bytes", "u_bytes", "lock_acquisitions", "remote_frees", "locks_per_free",
                  "cas_attempts_per_free", "remote_fraction"):
            expect(k in extra and (extra[k] is None) == (strategy is None), "extra.%s" % k)
    if workload == "migrate":
        epochs = extra.get("epochs")
        expect(isinstance(epochs, list) and len(epochs) == params["epochs"],
               "extra.epochs has %s entries, params.epochs is %s"
               % (len(epochs) if isinstance(epochs, list) else epochs, params["epochs"]))
        for i, e in enumerate(epochs):
            expect(list(e) == ["epoch", "seconds", "throughput", "live_bytes", "held_bytes",
                               "rss_kb"] and e["epoch"] == i, "epoch keys %s" % e)
            expect(is_int(e["live_bytes"]) and e["live_bytes"] > 0 and is_int(e["rss_kb"]) and
                   isinstance(e["throughput"], float), "epoch %s" % e)
            expect((e["held_bytes"] is None) == (strategy is None), "held_bytes %r" % e)
        expect((extra.get("a_bytes") is None) == (strategy is None), "a_bytes %r" % extra)
        expect(is_int(extra.get("rss_kb_peak")) and
               extra["rss_kb_peak"] == max(e["rss_kb"] for e in epochs), "rss_kb_peak")
        # The threads really change CPUs: every move (the first placement and one after each
        # epoch) is confirmed by sched_getcpu() on the CPU it asked for.
        if extra.get("cpus", 0) >= 2:
            expect(extra["move_failures"] == 0 and
                   extra["moves"] == rec["threads"] * (params["epochs"] + 1) ==
                   extra["moves_seen"], "moves %r" % {k: extra.get(k) for k in
                                                      ("moves", "moves_seen", "move_failures")})
    if workload == "stall":
        for k in ("throughput_undelayed", "throughput_outside", "throughput_delayed"):
            expect(isinstance(extra.get(k), float) and extra[k] >= 0, "extra.%s" % k)
        for k in ("ratio", "ratio_outside"):
            expect(k in extra and (extra[k] is None or isinstance(extra[k], float)), "extra.%s" % k)
        for k in ("signals", "pauses_outside", "delays", "signals_inside", "signals_outside"):
            expect(is_int(extra.get(k)) and extra[k] >= 0, "extra.%s = %r" % (k, extra.get(k)))
        if params["where"] == "inside":
            expect(extra["delays"] == extra["signals_inside"], "a delay outside the allocator")
        for m in ("undelayed", "outside", "delayed"):     # the other threads' latency per mode
            lat = extra.get("latency_" + m)
            expect(isinstance(lat, dict) and list(lat) == ["malloc", "free"], "latency_%s" % m)
            for k in ("malloc", "free"):
                check_latency_summary(lat[k], "extra.latency_%s.%s" % (m, k))
    if workload == "signal-malloc":
        expect(list(extra) == ["deadlocked", "signals_sent", "signals_handled", "handler_ops",
                               "stalled_threads", "stalled_after_s"], "extra keys %s" % list(extra))
        expect(isinstance(extra["deadlocked"], bool), "deadlocked %r" % extra["deadlocked"])
        for k in ("signals_sent", "signals_handled", "handler_ops", "stalled_threads"):
            expect(is_int(extra[k]) and extra[k] >= 0, "extra.%s = %r" % (k, extra[k]))
        if deadlocked:
            expect(extra["stalled_threads"] >= 1 and isinstance(extra["stalled_after_s"], float),
                   "a deadlock without a stalled thread: %r" % extra)
        else:
            expect(extra["stalled_threads"] == 0 and extra["stalled_after_s"] is None,
                   "no deadlock, yet %r" % extra)
    if workload == "phased":
        phases = extra.get("phases")
        expect(isinstance(phases, list) and [p.get("name") for p in phases] ==
               ["steady", "spike", "drain", "steady"], "phased phases %r" % phases)
        for p in phases:
            expect(list(p) == ["name", "start_s", "end_s", "live_bytes_peak", "held_bytes_peak",
                               "held_bytes_end", "rss_kb_peak", "rss_kb_end",
                               "private_dirty_kb_end", "lazyfree_kb_end"], "phase keys %r" % p)
            expect(0 <= p["start_s"] <= p["end_s"] and is_int(p["live_bytes_peak"]), "phase %r" % p)
            for k in ("held_bytes_peak", "held_bytes_end"):     # null without libhoardlab
                expect(p[k] is None if strategy is None else p[k] is None or is_int(p[k]),
                       "phase %s %r" % (k, p[k]))
        expect(phases[-1]["end_s"] == params["seconds"], "phases end at %r" % phases[-1])
        # issue 36: the checkpoints after the drain (null when the run ended first) and the
        # throughput of the spike (of the next burst: null without next_burst)
        cps = ["after_drain_%s_%s" % (t, k) for t in ("100ms", "1s", "5s")
               for k in ("rss_kb", "private_dirty_kb", "lazyfree_kb", "held_bytes", "live_bytes",
                         "cache_bytes", "heaps_free_bytes", "heaps_empty_bytes",
                         "global_free_bytes", "parked_bytes", "purged_bytes",
                         "large_cached_bytes", "sb_live", "sb_live_used_bytes")]
        expect(list(extra) == ["phases", "drained_s"] + cps + ["spike_ops_per_s",
                                                               "next_burst_ops_per_s"],
               "phased extra keys %s" % list(extra))
        expect(all(extra[k] is None or is_int(extra[k]) for k in cps), "checkpoints %r" % extra)
        expect(isinstance(extra["spike_ops_per_s"], float) and
               extra["next_burst_ops_per_s"] is None, "phased rates %r" % extra)
    if workload == "migrating-objects":
        # issue 51: every block allocated in the measured phase is freed in it; blocks handed
        # on and kept, threads that came and went
        keys = ["mallocs", "frees", "sent", "kept", "threads_created", "lane_blocks_peak",
                "lane_bytes_peak", "waits"]
        expect(list(extra) == keys, "migrating-objects extra keys %s" % list(extra))
        expect(all(is_int(extra[k]) and extra[k] >= 0 for k in keys), "extra %r" % extra)
        expect(extra["mallocs"] == extra["frees"] > 0 and
               rec["ops"] == extra["mallocs"] + extra["frees"],
               "ops %r, extra %r" % (rec["ops"], extra))
        expect(0 <= extra["kept"] <= extra["sent"],
               "kept %r of sent %r" % (extra["kept"], extra["sent"]))
        expect(extra["threads_created"] >= rec["threads"], "threads_created %r" % extra)
        expect(0 < extra["lane_blocks_peak"] <= 2 * params["live"], "lane_blocks_peak %r" % extra)
    if workload == "drain":
        check_drain(extra, rec, params, strategy)
    if workload == "linux-scalability":
        lat = extra.get("latency_ns")
        expect(isinstance(lat, dict) and lat["p50"] <= lat["p99"] <= lat["max"], "latency %r" % lat)


def drain_points(params):
    """The memory reads of a drain record as (key prefix, ms after the delete): filled,
    hold_<t> for each checkpoint, next (None: not in the hold)."""
    points = []
    for ms in (int(v) for v in params["checkpoints"].split(",") if v):
        points.append(("hold_%dms" % ms if ms % 1000 or not ms else "hold_%ds" % (ms // 1000), ms))
    return [("filled", None)] + points + [("next", None)]


def check_drain(extra, rec, params, strategy):
    """issue 65: the counts, the times, and each memory read (null past the hold)."""
    reads = ["rss_kb", "lazyfree_kb", "pte_kb", "held_kb", "share", "held_bytes"]
    points = drain_points(params)
    keys = ["floor_kb", "blocks", "fill_bytes", "kept_blocks", "kept_bytes", "table_kb",
            "fill_s", "delete_s"] + ["%s_%s" % (p, k) for p, _ in points[:-1] for k in reads] + \
        (["collect_call"] if params["collect"] else []) + \
        ["next_fill_s", "next_fill_blocks_per_s", "next_fill_speed_vs_first"] + \
        ["next_%s" % k for k in reads]
    expect(list(extra) == keys, "drain extra keys %s, expected %s" % (list(extra), keys))
    n = params["blocks"]
    expect(extra["blocks"] == n and rec["ops"] == 4 * n, "drain: ops %r, blocks %r"
           % (rec["ops"], extra["blocks"]))
    kept = extra["kept_blocks"]
    if params["every"]:
        per = [n // rec["threads"] + (i < n % rec["threads"]) for i in range(rec["threads"])]
        expect(kept == sum((m + params["every"] - 1) // params["every"] for m in per),
               "drain: kept %r with every %r" % (kept, params["every"]))
    else:
        expect(abs(kept - params["keep"] * n) <= rec["threads"], "drain: kept %r of %r at keep "
               "%r" % (kept, n, params["keep"]))
    expect(0 <= extra["kept_bytes"] <= extra["fill_bytes"] and
           params["min_size"] * n <= extra["fill_bytes"] <= params["max_size"] * n,
           "drain: bytes %r" % extra)
    for k in ("fill_s", "delete_s", "next_fill_s"):
        expect(isinstance(extra[k], float) and extra[k] >= 0, "drain: %s %r" % (k, extra[k]))
    expect(extra["filled_share"] == 1.0, "drain: filled_share %r" % extra["filled_share"])
    for p, ms in points:
        v = [extra["%s_%s" % (p, k)] for k in reads]
        if ms is not None and ms > params["hold_ms"]:
            expect(v == [None] * 6, "drain: %s read past the hold: %r" % (p, v))
            continue
        expect(is_int(v[0]) and v[0] > 0 and (v[1] is None or is_int(v[1])) and
               (v[2] is None or is_int(v[2])) and is_int(v[3]) and v[3] > 0, "drain %s %r" % (p, v))
        expect(isinstance(v[4], float) and v[4] > 0, "drain: %s_share %r" % (p, v[4]))
        expect(v[5] is None if strategy is None else is_int(v[5]),
               "drain: %s_held_bytes %r" % (p, v[5]))


def environment(args):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    for k in [k for k in env if k.startswith("HOARD_")]:
        del env[k]
    if args.get("preload"):
        env["LD_PRELOAD"] = args["preload"]
        env["HOARD_STRATEGY"] = args["strategy"]
    for kv in args.get("env", []):
        k, v = kv.split("=", 1)
        env[k] = v
    return env


def parse(argv):
    args = {"env": []}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            args["rest"] = argv[i + 1:]
            break
        key = a[2:].replace("-", "_")
        if key == "env":
            args["env"].append(argv[i + 1])
        else:
            args[key] = argv[i + 1]
        i += 2
    return args


def records(out, n=None):
    lines = [l for l in out.splitlines() if l.strip()]
    if n is not None:
        expect(len(lines) == n, "%d records, expected %d" % (len(lines), n))
    try:
        return [json.loads(l) for l in lines]
    except ValueError as e:
        fail("stdout is not JSON lines: %s" % e)


def option(rest, name, default):
    """The value of --name VALUE or --name=VALUE among hlbench's arguments."""
    for i, a in enumerate(rest):
        if a == name and i + 1 < len(rest):
            return rest[i + 1]
        if a.startswith(name + "="):
            return a.split("=", 1)[1]
    return default


def mode_run(hlbench, header, args):
    rest = args["rest"]
    workload = rest[0]
    repeat = int(rest[rest.index("--repeat") + 1]) if "--repeat" in rest else 1
    out = run([hlbench] + rest, environment(args), float(args.get("timeout", 300)))
    fields = stats_fields(header)
    recs = records(out)
    deadlocked = bool(recs) and recs[-1]["extra"].get("deadlocked") is True
    # A deadlock ends the process: the runs after it do not happen.
    expect(len(recs) == repeat or (deadlocked and 1 <= len(recs) <= repeat),
           "%d records, expected %d" % (len(recs), repeat))
    every = int(option(rest, "--latency-every", 64))
    sampling = float(option(rest, "--sample-interval", 0.01)) > 0
    for i, rec in enumerate(recs):
        check_record(rec, workload, args.get("strategy"), fields, hlbench, every, sampling)
        expect(rec["repeat"] == i, "repeat %r, expected %d" % (rec["repeat"], i))
        if "--label" in rest:
            expect(rec["label"] == rest[rest.index("--label") + 1], "label %r" % rec["label"])
    if workload == "migrating-objects":
        # the counts are a function of the seed alone (each --repeat run uses the same seed)
        counts = [(r["ops"], r["extra"]["sent"], r["extra"]["kept"]) for r in recs]
        expect(len(set(counts)) == 1, "migrating-objects counts differ between runs of one "
               "seed: %r" % counts)
    if args.get("deadlock") == "expected":
        expect(deadlocked, "expected the watchdog's deadlock record, got %r" % recs[-1]["extra"])
    if workload == "signal-malloc":
        print("signal-malloc: deadlocked %s after %d records" % (deadlocked, len(recs)))
    census = args.get("census")
    if census:
        h = recs[0]["hoardlab"]
        blocks, lines = h["census_false_blocks"], h["census_false_lines"]
        if census == "zero":
            expect(blocks == 0 and lines == 0,
                   "census found %d falsely shared blocks on %d lines, expected none" % (blocks, lines))
        else:
            expect(blocks > 0 and 0 < lines <= blocks,
                   "census found %d blocks on %d lines, expected some" % (blocks, lines))
    outside = args.get("outside")       # the census from outside the allocator (census.c)
    if outside:
        x = recs[0]["extra"]
        blocks, lines = x["census_false_blocks"], x["census_false_lines"]
        if outside == "zero":
            expect(blocks == 0 and lines == 0, "the census from outside found %d blocks on %d "
                   "lines, expected none" % (blocks, lines))
        else:
            expect(blocks > 0 and 0 < lines <= blocks, "the census from outside found %d "
                   "blocks on %d lines, expected some" % (blocks, lines))
    print("ok: %s" % " ".join(rest))


def offline_peaks(path):
    """Peak live requested and usable bytes, computed from the trace alone."""
    live, live_u, peak, peak_u, held, n, last_t = 0, 0, 0, 0, {}, 0, {}
    with open(path) as f:
        expect(f.readline() == "# hoardlab trace 1\n", "trace header")
        head = f.readline().split()
        expect(head[1] == "pid" and head[5] == "records", "trace header line 2: %s" % head)
        for line in f:
            if line.startswith("#"):
                continue
            op, t, tid, ident, size, align, usable = line.split()
            t, size, usable = int(t), int(size), int(usable)
            expect(t >= last_t.get(tid, 0), "trace times go back within thread %s" % tid)
            last_t[tid] = t
            n += 1
            if ident in held:                     # a free, or an allocation over a live block
                s, u = held.pop(ident)
                live -= s
                live_u -= u
            if op == "a":
                held[ident] = (size, usable)
                live += size
                live_u += usable
                peak, peak_u = max(peak, live), max(peak_u, live_u)
    expect(n == int(head[6]), "trace says %s records, has %d" % (head[6], n))
    return peak, peak_u, n


def mode_replay(hlbench, header, args):
    fields = stats_fields(header)
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "t.trace")
        rec_strategy = args.get("strategy") or "serial"
        env = environment({"preload": args["record_lib"], "strategy": rec_strategy,
                           "env": ["HOARD_TRACE=" + trace]})
        run([hlbench, "shbench", "--scale", "0.0005", "--threads", "2"], env)
        peak, peak_u, n = offline_peaks(trace)
        expect(n > 1000, "trace has only %d records" % n)
        env = environment({"preload": args.get("preload"), "strategy": args.get("strategy"),
                           "env": ["HOARD_STATS_BATCH=0"]})
        for mode in ("single", "threads"):
            rec = records(run([hlbench, "replay", "--trace", trace, "--mode", mode], env), 1)[0]
            check_record(rec, "replay", args.get("strategy"), fields, hlbench)
            e = rec["extra"]
            expect(e["events"] == n, "replayed %s events of %d" % (e["events"], n))
            expect(e["trace_peak_requested"] == peak and e["peak_requested"] == peak,
                   "peak requested: offline %d, replay's reading %s, replay %s"
                   % (peak, e["trace_peak_requested"], e["peak_requested"]))
            expect(e["trace_peak_usable"] == peak_u, "peak usable: offline %d, replay %s"
                   % (peak_u, e["trace_peak_usable"]))
            if args.get("strategy"):
                # Same strategy as recorded, exact U (stats_batch 0): the replay's U is the
                # trace's own peak, in usable bytes.
                expect(e["replay_u"] == peak_u, "replay U %s, trace peak U %d (%s)"
                       % (e["replay_u"], peak_u, mode))
            else:
                expect(e["replay_u"] is None, "replay_u without libhoardlab")
    print("ok: replay, peak %d bytes requested, %d usable, %d events" % (peak, peak_u, n))


def mode_learned(hlbench, header, args):
    """phased with a distribution learned from a trace recorded under libhoardlab."""
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "t.trace")
        env = environment({"preload": args["record_lib"], "strategy": "serial",
                           "env": ["HOARD_TRACE=" + trace]})
        run([hlbench, "shbench", "--scale", "0.0005", "--threads", "2"], env)
        rest = ["phased", "--threads", "2", "--scale", "0.01", "--trace", trace]
        rec = records(run([hlbench] + rest, environment({})), 1)[0]
        check_record(rec, "phased", None, stats_fields(header), hlbench)
        expect(rec["params"]["trace"] == trace and rec["ops"] > 0, "phased --trace %r" % rec)
        bad = os.path.join(tmp, "bad.trace")
        with open(bad, "w") as f:
            f.write("# hoardlab trace 1\nx 1 2\n")
        for path in (bad, os.path.join(tmp, "none")):
            p = subprocess.run([hlbench, "phased", "--trace", path], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
            expect(p.returncode == 2 and p.stderr.count("\n") == 1 and p.stdout == "",
                   "phased --trace %s: exit %d, %r" % (path, p.returncode, p.stderr))
    print("ok: phased with a learned distribution")


def mode_cli(hlbench):
    p = subprocess.run([hlbench, "--list"], stdout=subprocess.PIPE, text=True)
    expect(p.returncode == 0, "--list exit %d" % p.returncode)
    names = [l.split()[0] for l in p.stdout.splitlines() if l and not l.startswith(" ")]
    expect(names == WORKLOADS, "--list shows %s" % names)
    expect(all(l.startswith("    defaults:") for l in p.stdout.splitlines() if l.startswith(" ")),
           "every workload has a defaults line")
    for w in WORKLOADS:
        h = subprocess.run([hlbench, w, "--help"], stdout=subprocess.PIPE, text=True)
        expect(h.returncode == 0 and "--threads" in h.stdout, "%s --help" % w)
    for bad in (["nosuch"], ["threadtest", "--nosuch", "1"], ["threadtest", "--rounds", "x"],
                ["threadtest", "--threads", "0"], ["threadtest", "--scale", "0"],
                ["threadtest", "--sample-interval", "x"], ["threadtest", "--latency-every", "-1"],
                ["blowup-prodcons", "--threads", "1"], ["replay"], ["stall", "--threads", "1"],
                ["stall", "--where", "nowhere"], ["signal-malloc", "--handler-sizes", "1,x"],
                ["xfree", "--batch", "0"], ["migrate", "--every", "0"], ["threadtest", "--spawn-first", "x"],
                ["threadtest", "--spawn-first", "65"], ["threadtest", "--spawn-first"],
                ["shbench", "--min-size", "50", "--max-size", "10"]):
        b = subprocess.run([hlbench] + bad, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        expect(b.returncode == 2, "%s: exit %d, expected 2" % (bad, b.returncode))
        expect(b.stdout == "" and b.stderr.count("\n") == 1, "%s: one line on stderr" % bad)
    # --spawn-first N: N threads created and joined before the runs, recorded (default 0).
    for args, n in (([], 0), (["--spawn-first", "1"], 1), (["--spawn_first=2"], 2)):
        r = subprocess.run([hlbench, "threadtest", "--threads", "1", "--scale", "0.001"] + args,
                           stdout=subprocess.PIPE, text=True)
        expect(r.returncode == 0, "threadtest %s: exit %d" % (args, r.returncode))
        rec = json.loads(r.stdout)
        expect(list(rec)[:len(KEYS)] == KEYS and rec["spawn_first"] == n,
               "threadtest %s: spawn_first %r, expected %d" % (args, rec.get("spawn_first"), n))
    print("ok: cli")


def mode_sampling(hlbench):
    """A short run: a series of rows in increasing time and the latency keys, by default and
    with the options set; neither key when turned off; thinning keeps the buffer's bounds."""
    def one(*args):
        p = subprocess.run([hlbench, "threadtest", "--threads", "2", "--scale", "0.05"]
                           + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=300)
        expect(p.returncode == 0, "threadtest %s: exit %d: %s" % (args, p.returncode, p.stderr))
        return records(p.stdout, 1)[0]
    rec = one()
    check_record(rec, "threadtest", None, [], hlbench)
    expect(len(rec["series"]["rows"]) >= 2, "a series of one row")       # t = 0 and the end
    expect(rec["series"]["rows"][0][0] == 0.0, "the first row is not at t = 0")
    expect(abs(rec["series"]["rows"][-1][0] - rec["wall_s"]) < 1e-6, "the last row is the end")
    for k in ("malloc", "free"):
        expect(rec["latency"][k]["samples"] > 0, "no %s timed" % k)
    rec = one("--latency-every", "1", "--sample-interval", "0.002")
    check_record(rec, "threadtest", None, [], hlbench, 1, True)
    # every call but each thread's first is timed
    expect(rec["latency"]["malloc"]["samples"] >= rec["ops"] // 2 - 2 * 2, "every malloc timed")
    iv = rec["series"]["interval_s"]
    expect(iv in [0.002 * 2 ** j for j in range(30)], "interval %r is not 0.002 x 2^j" % iv)
    rec = one("--latency-every", "0", "--sample-interval", "0")
    check_record(rec, "threadtest", None, [], hlbench, 0, False)
    # a tiny interval on a longer run: whatever the machine's speed, the thinned buffer keeps
    # 128..256 rows (+ the last) once the interval has doubled, at 0.0001 x 2^j
    rec = one("--sample-interval", "0.0001", "--scale", "0.5")
    check_record(rec, "threadtest", None, [], hlbench)
    iv, n = rec["series"]["interval_s"], len(rec["series"]["rows"])
    expect(any(abs(iv - 0.0001 * 2 ** j) < 1e-12 for j in range(30)), "interval %r" % iv)
    expect(n <= 257 and (iv == 0.0001 or n >= 129), "%d rows at interval %r" % (n, iv))
    print("ok: sampling (%d rows at %g s in the last run)" % (n, iv))


def mode_hlrun(hlrun):
    """hlrun's first line as before; with -i, series lines of the process tree after it."""
    head = re.compile(r"status=0 wall_ns=\d+ utime_us=\d+ stime_us=\d+ maxrss_kb=\d+$")
    line = re.compile(r"series t_s=(\d+\.\d{3}) rss_kb=(\d+) private_dirty_kb=(\d+) "
                      r"lazyfree_kb=(\d+|null) anonymous_kb=(\d+) procs=(\d+)$")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.txt")
        # a shell that starts a child, so the tree has two processes for a while
        for args in ([], ["-i", "0.01"]):
            p = subprocess.run([hlrun] + args + ["-o", out, "--", "sh", "-c",
                                                 "sleep 0.3 & wait"], timeout=60)
            expect(p.returncode == 0, "hlrun %s: exit %d" % (args, p.returncode))
            lines = open(out).read().splitlines()
            expect(head.match(lines[0]) is not None, "hlrun's first line %r" % lines[0])
            if not args:
                expect(len(lines) == 1, "hlrun without -i wrote %d lines" % len(lines))
                continue
            expect(len(lines) >= 2, "hlrun -i wrote no series")
            last = -1.0
            for l in lines[1:]:
                m = line.match(l)
                expect(m is not None, "hlrun series line %r" % l)
                expect(float(m.group(1)) > last and int(m.group(6)) >= 1 and int(m.group(2)) > 0,
                       "hlrun series line %r after t_s %g" % (l, last))
                last = float(m.group(1))
            expect(max(int(line.match(l).group(6)) for l in lines[1:]) >= 2,
                   "the series never saw the shell's child")
        b = subprocess.run([hlrun, "-i", "0", "-o", out, "--", "true"], stderr=subprocess.PIPE,
                           text=True)
        expect(b.returncode == 2 and b.stderr.count("\n") == 1, "hlrun -i 0: exit %d" % b.returncode)
    print("ok: hlrun, %d series lines" % (len(lines) - 1))


def mode_broken(hlbench, lib, rest):
    """Under an allocator that hands out overlapping blocks, the run must fail its stamps."""
    env = environment({"env": ["LD_PRELOAD=" + lib]})
    p = subprocess.run([hlbench] + rest, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    expect(p.returncode == 1, "exit %d under a broken allocator, expected 1 (stderr: %s)"
           % (p.returncode, p.stderr[-500:]))
    expect("lost its stamp" in p.stderr or "differs at byte" in p.stderr,     # drain: whole blocks
           "no stamp failure reported: %s" % p.stderr[-500:])
    expect(p.stdout == "", "a record was written for a failed run")
    print("ok: broken allocator caught: %s" % p.stderr.strip())


def mode_planted(hlbench, rest):
    """drain --corrupt 1 changes one byte of a survivor in the hold: the run must fail at the
    check after the hold, naming the block, with no record; without it the run passes."""
    env = environment({"env": []})
    p = subprocess.run([hlbench] + rest + ["--corrupt", "1"], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    expect(p.returncode == 1, "exit %d with a planted corruption, expected 1 (stderr: %s)"
           % (p.returncode, p.stderr[-500:]))
    expect(re.search(r"drain: block \d+ of thread 0's first fill \(0x[0-9a-f]+, \d+ bytes\) "
                     r"differs at byte \d+ after the hold", p.stderr),
           "the planted corruption not named: %s" % p.stderr[-500:])
    expect(p.stdout == "", "a record was written for a failed run")
    q = subprocess.run([hlbench] + rest, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=300)
    expect(q.returncode == 0 and q.stdout.count("\n") >= 1, "without the corruption: exit %d "
           "(stderr: %s)" % (q.returncode, q.stderr[-500:]))
    print("ok: planted corruption caught: %s" % p.stderr.strip())


def main():
    if len(sys.argv) < 3:
        fail(__doc__)
    mode, hlbench = sys.argv[1], sys.argv[2]
    if mode == "cli":
        mode_cli(hlbench)
    elif mode == "sampling":
        mode_sampling(hlbench)
    elif mode == "hlrun":
        mode_hlrun(hlbench)
    elif mode == "learned":
        mode_learned(hlbench, sys.argv[3], parse(sys.argv[4:]))
    elif mode == "run":
        mode_run(hlbench, sys.argv[3], parse(sys.argv[4:]))
    elif mode == "planted":
        mode_planted(hlbench, sys.argv[4:])
    elif mode == "broken":
        mode_broken(hlbench, sys.argv[3], sys.argv[5:])
    elif mode == "replay":
        mode_replay(hlbench, sys.argv[3], parse(sys.argv[4:]))
    else:
        fail("unknown mode %s" % mode)


if __name__ == "__main__":
    main()
