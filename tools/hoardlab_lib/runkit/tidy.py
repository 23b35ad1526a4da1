"""The tidy results: runs.csv (one row per run), rounds.csv (one row per run and round
of a blowup workload) and series.csv (one row per run and sample of memory over time). The
schema is documented column by column in results/README.md; tests/tools/test_tidy.py and
test_series.py keep the two in step."""
import csv
import json
import lzma
import os

from .. import allocators, common
from . import nodes

# Columns every runs.csv has, in this order. Groups with a prefix follow (sorted):
# knob.<key>, params.<name>, hoardlab.<counter>, extra.<name>, series.<column>_<summary>,
# latency.<name>, program.<name>, load.<name>.
RUN_COLUMNS = [
    # the sweep and the run's place in it
    "sweep", "index", "order", "repetition",
    # the allocator
    "allocator", "variant", "alloc_kind", "strategy", "knobs", "preload",
    # the workload
    "workload_label", "workload", "threads", "scale", "seed", "pin",
    # what happened
    "status", "exit_code", "error", "started_at", "elapsed_s", "cpu_s", "record",
    # where it ran (a kind of node: cpu_model and topology; see nodes.py)
    "node", "cpu_model", "topology",
    # the hlbench record
    "schema", "reported_strategy", "pinned", "wall_s", "ops", "throughput", "peak_rss_kb",
    "cache_line", "cores", "rounds",
    # huge-page coverage at the end of the measured phase, any allocator (issue 50)
    "huge_coverage", "anon_huge_kb",
]
# The hoardlab.<name> columns, in this order: every statistic of the build (`hlconfig --stats`,
# declared once in HOARDLAB_STATS of include/hoardlab.h), then these two ratios, which hlbench
# and programs.py compute from them.
DERIVED_FIELDS = ["fragmentation", "fragmentation_os"]


def hoardlab_fields(bdir=None):
    """The statistics' names of the build at `bdir` (default: common.build_dir()) and the
    derived ratios: the hoardlab.* columns every runs.csv has, in order."""
    return common.stat_names(bdir) + DERIVED_FIELDS


ROUND_COLUMNS = ["sweep", "index", "allocator", "variant", "workload_label", "workload",
                 "threads", "repetition", "round", "live_bytes", "os_bytes", "rss_kb",
                 "lazyfree_kb"]
# series.csv: a run's identifying columns (as rounds.csv has them), the sample's time, then
# the record's series columns: these first, in this order, any other a record names after them.
SERIES_ID = ["sweep", "index", "allocator", "variant", "workload_label", "workload", "threads",
             "repetition", "record"]
SERIES_FIELDS = ["held_bytes", "in_use_bytes", "self_bytes", "rss_kb", "private_dirty_kb",
                 "lazyfree_kb", "anonymous_kb", "anon_huge_kb"]
SERIES_COLUMNS = SERIES_ID + ["t_s"] + SERIES_FIELDS
PREFIXES = ("knob.", "params.", "hoardlab.", "extra.", "series.", "latency.", "program.",
            "load.")
STRING_COLUMNS = {"sweep", "allocator", "variant", "alloc_kind", "strategy", "knobs", "preload",
                  "workload_label", "workload", "status", "error", "started_at",
                  "reported_strategy", "node", "cpu_model", "topology",
                  "program.output_sha256", "latency.clock"}


def knobs_text(knobs):
    return ";".join("%s=%s" % (k, v) for k, v in sorted(knobs.items()))


def _flatten(prefix, obj, out):
    for k, v in obj.items():
        key = prefix + str(k)
        if isinstance(v, dict):
            _flatten(key + ".", v, out)
        elif isinstance(v, list):
            out[key] = json.dumps(v, separators=(",", ":"))
        else:
            out[key] = v


def time_weighted_mean(ts, vs):
    """The mean of a sampled quantity over time, each sample's value held until the next
    sample (the last sample ends the run and weighs nothing). An interval whose sample is
    None is left out of both the sum and the time. Samples that span no time: their plain
    mean; none with a value: None."""
    num = den = 0.0
    for (t0, v), t1 in zip(zip(ts, vs), ts[1:]):
        if v is not None and t1 > t0:
            num += v * (t1 - t0)
            den += t1 - t0
    if den > 0:
        return num / den
    known = [v for v in vs if v is not None]
    return sum(known) / len(known) if known else None


def series_summary(series):
    """runs.csv's columns of a record's `series`: series.samples, series.interval_s and, per
    column, series.<column>_mean (time_weighted_mean), _peak and _last (the last sample
    with a value); a column without any value gives empty cells."""
    cols = list(series.get("columns") or [])
    rows = [r for r in (series.get("rows") or []) if isinstance(r, list) and len(r) == len(cols)]
    out = {"series.samples": len(rows), "series.interval_s": series.get("interval_s")}
    if "t_s" not in cols:
        return out
    ts = [r[cols.index("t_s")] for r in rows]
    for i, c in enumerate(cols):
        if c == "t_s":
            continue
        vs = [r[i] for r in rows]
        known = [v for v in vs if v is not None]
        out["series.%s_mean" % c] = time_weighted_mean(ts, vs)
        out["series.%s_peak" % c] = max(known) if known else None
        out["series.%s_last" % c] = known[-1] if known else None
    return out


def series_rows(ident, series):
    """series.csv's rows of a record's `series`: `ident` (the SERIES_ID columns) with t_s and
    each column of one sample."""
    cols = list(series.get("columns") or [])
    return [dict(ident, **dict(zip(cols, r))) for r in (series.get("rows") or [])
            if isinstance(r, list) and len(r) == len(cols)]


def latency_columns(latency):
    """runs.csv's columns of a record's `latency`: an operation's histogram summary
    ({"samples", "p50_ns", ...}) gives latency.<op>_<key>; scalars (sample_every, clock,
    overhead_ns) latency.<name>."""
    out = {}
    for k, v in latency.items():
        if isinstance(v, dict):
            for x, y in v.items():
                if not isinstance(y, (dict, list)):
                    out["latency.%s_%s" % (k, x)] = y
        elif not isinstance(v, list):
            out["latency." + str(k)] = v
    return out


def series_columns(rows):
    """series.csv's columns for `rows`: SERIES_COLUMNS, then any other column a record's
    series named, in order of first appearance."""
    more = []
    for r in rows:
        more += [c for c in r if c not in SERIES_COLUMNS and c not in more]
    return SERIES_COLUMNS + more


def rows_for(run, result, sweep_name, order, bdir=None, series=None):
    """Tidy rows (normally one) for a run and its result from runner.run_one; plus the
    rounds rows. A run without records still gives one row carrying its status. The node
    columns are `result['node']` if the run ran elsewhere, else this machine's. The hoardlab.*
    columns are the statistics of the build at `bdir`. With a list `series`, the series.csv
    rows of the records' `series` are appended to it."""
    base = {
        "sweep": sweep_name, "index": run["index"], "order": order,
        "repetition": run["repetition"], "allocator": run["allocator"],
        "variant": run["variant"], "alloc_kind": run["kind"], "strategy": run["base"],
        "knobs": knobs_text(run["knobs"]), "preload": result.get("env", {}).get("LD_PRELOAD", ""),
        "workload_label": run["workload_label"], "workload": run["workload"],
        "threads": run["threads"], "scale": run["scale"], "seed": run["seed"],
        "pin": int(bool(run.get("pin"))), "status": result["status"],
        "exit_code": result["exit_code"], "error": result["error"].replace("\n", " | ")
        if result["status"] != "ok" else "",
        "started_at": result["started_at"], "elapsed_s": result["elapsed_s"],
    }
    base.update(result.get("node") or nodes.here())
    ld = dict(result.get("load") or {})     # the machine's other load (sweeps/load.py)
    base["cpu_s"] = ld.pop("cpu_s", None)
    base.update(("load." + k, v) for k, v in ld.items())
    for k, v in run["knobs"].items():
        base["knob." + k] = v
    for k, v in run.get("params", {}).items():
        base["params." + k] = v
    recs = result["records"] or [None]
    rows, rounds = [], []
    for i, rec in enumerate(recs):
        row = dict(base)
        row["record"] = i
        if rec is not None:
            row.update({
                "schema": rec.get("schema"), "reported_strategy": rec.get("strategy"),
                "pinned": int(bool(rec.get("pinned"))) if rec.get("pinned") is not None else None,
                "wall_s": rec.get("wall_s"), "ops": rec.get("ops"),
                "throughput": rec.get("throughput"), "peak_rss_kb": rec.get("peak_rss_kb"),
                "cache_line": rec.get("cache_line"), "cores": rec.get("cores"),
                "huge_coverage": rec.get("huge_coverage"), "anon_huge_kb": rec.get("anon_huge_kb"),
            })
            for k, v in (rec.get("params") or {}).items():
                row["params." + k] = v if not isinstance(v, (list, dict)) else json.dumps(v)
            hl = rec.get("hoardlab")
            if isinstance(hl, dict):
                fields = hoardlab_fields(bdir)
                for k in fields:
                    row["hoardlab." + k] = hl.get(k)
                for k, v in hl.items():
                    if k not in fields and not isinstance(v, (dict, list)):
                        row["hoardlab." + k] = v
            for k, v in (rec.get("program") or {}).items():     # a real program's run
                row["program." + k] = v
            extra = dict(rec.get("extra") or {})
            rlist = extra.pop("rounds", None)
            _flatten("extra.", extra, row)
            if isinstance(rec.get("series"), dict):
                row.update(series_summary(rec["series"]))
                if series is not None:
                    series += series_rows({c: row.get(c) for c in SERIES_ID}, rec["series"])
            if isinstance(rec.get("latency"), dict):
                row.update(latency_columns(rec["latency"]))
            if isinstance(rlist, list):
                row["rounds"] = len(rlist)
                ident = {c: base[c] for c in ROUND_COLUMNS[:ROUND_COLUMNS.index("round")]}
                rounds += [dict(ident, **{c: r.get(c) for c in ROUND_COLUMNS if c not in ident})
                           for r in rlist]
            # An allocator that did not load is not a measurement of that allocator.
            expected = allocators.expected_strategy(run["base"], run["knobs"]) \
                if run["kind"] == "hoardlab" else None
            if row["status"] == "ok" and expected and rec.get("strategy") != expected:
                row["status"] = "not-loaded"
                row["error"] = ("hlbench reports strategy %r, expected %r: libhoardlab.so "
                                "was not loaded or chose another strategy"
                                % (rec.get("strategy"), expected))
        rows.append(row)
    return rows, rounds


def columns_for(rows, bdir=None, fields=None):
    """runs.csv's columns for `rows`: RUN_COLUMNS, then the groups. The hoardlab.* group
    starts with `fields` (default: hoardlab_fields(bdir)) in their order."""
    extra = set()
    for r in rows:
        extra.update(k for k in r if k.startswith(PREFIXES))
    hl = ["hoardlab." + k for k in (hoardlab_fields(bdir) if fields is None else fields)]
    rest = sorted(extra - set(hl))
    groups = [c for c in rest if c.startswith("knob.")] + \
        [c for c in rest if c.startswith("params.")] + hl + \
        [c for c in rest if c.startswith("hoardlab.")] + \
        [c for c in rest if c.startswith("extra.")] + \
        [c for c in rest if c.startswith("series.")] + \
        [c for c in rest if c.startswith("latency.")] + \
        [c for c in rest if c.startswith("program.")] + \
        [c for c in rest if c.startswith("load.")]
    return RUN_COLUMNS + groups


def read_fields(rows):
    """The hoardlab.* names of rows read from a runs.csv (read_csv), in the file's order, for
    columns_for(fields=) to write the same columns again without asking a build."""
    seen = {}
    for r in rows:
        seen.update((k[len("hoardlab."):], None) for k in r if k.startswith("hoardlab."))
    return list(seen)


def _cell(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return int(v)
    return v


# A table may be stored xz-compressed as NAME.csv.xz (series.csv always; a reference's
# runs.csv and rounds.csv too, results/README.md): read_csv and table_file take either.
COMPRESSED = ".xz"


def table_file(path):
    """path (NAME.csv), or path + COMPRESSED when only that is there; None when neither."""
    for p in (path, path + COMPRESSED):
        if os.path.exists(p):
            return p
    return None


def _open(path, mode):
    """A table's file as text, through xz when its name ends in COMPRESSED."""
    if path.endswith(COMPRESSED):
        return lzma.open(path, mode + "t", newline="", preset=9 if mode == "w" else None)
    return open(path, mode, newline="")


def write_csv(path, rows, columns):
    with _open(path, "w") as f:
        w = csv.DictWriter(f, fieldnames=columns, extrasaction="raise")
        w.writeheader()
        for r in rows:
            w.writerow({c: _cell(r.get(c)) for c in columns})


def write_series(outdir, rows):
    """series.csv in `outdir`, stored compressed (series.csv.xz: samples are most of a
    sweep's bytes), when a run sampled memory over time (else no file, and none left from
    an earlier sweep into the same folder)."""
    p = os.path.join(outdir, "series.csv")
    for old in (p, p + COMPRESSED):
        if os.path.exists(old):
            os.remove(old)
    if rows:
        write_csv(p + COMPRESSED, rows, series_columns(rows))


def read_series(outdir):
    """series.csv's rows in `outdir` (or series.csv.xz's); [] when there is none (no run
    sampled, older results)."""
    p = table_file(os.path.join(outdir, "series.csv"))
    return read_csv(p) if p else []


def convert(col, text):
    if text == "" or text is None:
        return None
    if col in STRING_COLUMNS or col.startswith("knob."):
        return text
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def read_csv(path):
    """The rows of the table at path (NAME.csv, or NAME.csv.xz when only that is there)."""
    with _open(table_file(path) or path, "r") as f:
        return [{k: convert(k, v) for k, v in r.items()} for r in csv.DictReader(f)]
