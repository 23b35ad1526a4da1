"""runs.csv / rounds.csv: flattening a record, failed runs, the schema and its docs.
The record below is a schema placeholder (every number 0 or 1), not a measurement."""
import os
import re

from conftest import REPO
from hoardlab_lib.runkit import tidy

RUN = {"index": 3, "allocator": "pad", "variant": "pad", "base": "concurrent",
       "kind": "hoardlab", "knobs": {"padding": "on", "census": "on"}, "swept": {},
       "workload_label": "census-tt", "workload": "blowup-roundrobin", "params": {"rounds": "1"},
       "threads": 2, "scale": 1.0, "seed": 1, "repetition": 0, "pin": False, "timeout": 1}


def record(strategy="concurrent"):
    return {"schema": 1, "workload": "blowup-roundrobin", "label": "census-tt",
            "strategy": strategy, "threads": 2, "seed": 1, "scale": 1.0, "repeat": 0,
            "pinned": False, "params": {"rounds": 1, "blocks": 1},
            "wall_s": 1.0, "ops": 1, "throughput": 1.0, "peak_rss_kb": 1, "cache_line": 1,
            "cores": 1,
            "hoardlab": dict({k: 1 for k in tidy.hoardlab_fields()}, fragmentation=1.0),
            "extra": {"rounds": [{"round": 0, "live_bytes": 1, "os_bytes": 1, "rss_kb": 1},
                                 {"round": 1, "live_bytes": 1, "os_bytes": None, "rss_kb": 1}],
                      "latency_ns": {"p50": 1, "p99": 1}}}


def result(status="ok", recs=None, code=0, err=""):
    return {"status": status, "records": recs if recs is not None else [record()],
            "exit_code": code, "error": err, "started_at": "t", "elapsed_s": 0.0,
            "env": {"LD_PRELOAD": "/x/libhoardlab.so"}}


def test_flatten_ok_run(tmp_path):
    rows, rounds = tidy.rows_for(RUN, result(), "s", 5)
    assert len(rows) == 1 and len(rounds) == 2
    r = rows[0]
    assert r["status"] == "ok" and r["order"] == 5 and r["index"] == 3
    assert r["knobs"] == "census=on;padding=on"
    assert r["knob.padding"] == "on" and r["params.blocks"] == 1
    assert r["hoardlab.os_bytes_peak"] == 1 and r["extra.latency_ns.p99"] == 1
    assert r["rounds"] == 2 and "extra.rounds" not in r
    assert [x["round"] for x in rounds] == [0, 1] and rounds[1]["os_bytes"] is None
    cols = tidy.columns_for(rows)
    assert cols[:len(tidy.RUN_COLUMNS)] == tidy.RUN_COLUMNS
    p = tmp_path / "runs.csv"
    tidy.write_csv(str(p), rows, cols)
    back = tidy.read_csv(str(p))
    assert back[0]["threads"] == 2 and back[0]["knob.padding"] == "on"
    assert back[0]["hoardlab.fragmentation"] == 1.0 and back[0]["error"] is None
    assert list(back[0]) == cols


def test_failed_run_is_a_row():
    rows, rounds = tidy.rows_for(RUN, result("failed", [], 2, "hoardlab: bad key\n"), "s", 0)
    assert len(rows) == 1 and not rounds
    assert rows[0]["status"] == "failed" and rows[0]["exit_code"] == 2
    assert "hoardlab: bad key" in rows[0]["error"] and "\n" not in rows[0]["error"]
    assert rows[0].get("throughput") is None


def test_strategy_not_loaded_is_flagged():
    rows, _ = tidy.rows_for(RUN, result(recs=[record(strategy=None)]), "s", 0)
    assert rows[0]["status"] == "not-loaded" and "not loaded" in rows[0]["error"]
    prod = dict(RUN, kind="production", base="glibc", knobs={})
    rec = record(strategy=None)
    rec["hoardlab"] = None
    rows, _ = tidy.rows_for(prod, result(recs=[rec]), "s", 0)
    assert rows[0]["status"] == "ok" and "hoardlab.mallocs" not in rows[0]


def test_readme_documents_every_column():
    with open(os.path.join(REPO, "results", "README.md")) as f:
        doc = f.read()
    documented = set(re.findall(r"`([a-z_.<>0-9]+)`", doc))
    for c in tidy.RUN_COLUMNS + tidy.ROUND_COLUMNS + tidy.SERIES_COLUMNS:
        assert c in documented, c
    # the statistics' columns are described by their table (hlconfig --stats); the README
    # names no column the build does not have, and documents the derived ratios
    fields = set(tidy.hoardlab_fields())
    for c in documented:
        if c.startswith("hoardlab.") and c != "hoardlab.<name>":
            assert c[len("hoardlab."):] in fields, c
    for c in tidy.DERIVED_FIELDS:
        assert "hoardlab." + c in documented, c
    for prefix in tidy.PREFIXES:
        assert any(d.startswith(prefix) for d in documented), prefix
