"""The fronts experiment (issue 37): its report section on a made-up runs.csv (written and
read back as a sweep writes it), the CPU cache's ratios to the thread cache, the shipped sweep file, and
threadtest's `cpus` and `held` parameters on the built hlbench (short runs)."""
import json
import os
import subprocess

from conftest import BDIR, REPO, needs_built
from hoardlab_lib.runkit import tidy
from hoardlab_lib.report import fronts
from hoardlab_lib.sweeps import Sweep

THREADS = (1, 2, 8, 32, 64)
KIB = 1024


def runs(cpu_cache=4 * KIB, cpu_speed=1.0, with_cpu=True, reps=3):
    """Three repetitions of oversub and migrate per front. `thread` (hoard2026) holds 64 KiB
    per thread in its caches and runs 100 M ops/s; `cpu` (cache = cpu) holds cpu_cache per
    CPU (2) at cpu_speed x thread's throughput; `cpu-heaps` no cache; tcmalloc 16 KiB a
    thread."""
    fronts_ = [("thread", "hoard2026", "", lambda t: 64 * KIB * t, 1.0),
               ("thread-sbc", "hoard2026", "tlab_sb_cache=16", lambda t: 64 * KIB * t, 1.05),
               ("cpu-heaps", "hoard2026", "tlab=off", lambda t: 0, 0.6),
               ("tcmalloc", "tcmalloc", "", lambda t: 16 * KIB * t, 0.9)]
    if with_cpu:
        fronts_.append(("cpu", "hoard2026", "cache=cpu", lambda t: cpu_cache * 2, cpu_speed))
    rows, i = [], 0
    for wl in ("oversub", "migrate"):
        for v, strategy, knobs, cache, speed in fronts_:
            for t in THREADS:
                for rep in range(reps):
                    i += 1
                    rows.append({
                        "sweep": "fronts", "index": i, "repetition": rep, "allocator": v,
                        "variant": v, "strategy": strategy, "knobs": knobs,
                        "alloc_kind": "production" if strategy == "tcmalloc" else "hoardlab",
                        "workload_label": wl, "threads": t, "status": "ok",
                        "workload": "threadtest" if wl == "oversub" else wl,
                        "throughput": 1e8 * speed * (1 + 0.01 * rep),
                        "params.cpus": 2 if wl == "oversub" else None,
                        "extra.cache_bytes": cache(t) if wl == "oversub" else None,
                        "latency.malloc_p99_ns": 40 + t, "latency.free_p99_ns": 30 + t})
    return rows


def through_csv(rows, tmp_path):
    path = str(tmp_path / "runs.csv")
    cols = tidy.RUN_COLUMNS + sorted({k for r in rows for k in r} - set(tidy.RUN_COLUMNS))
    tidy.write_csv(path, rows, cols)
    return tidy.read_csv(path)


def test_section_tables_and_target_met(tmp_path):
    rows = through_csv(runs(), tmp_path)
    text = "\n".join(fronts.fronts_section(rows, "thread"))
    assert "## Fronts" in text
    for head in ("oversub: throughput", "oversub: MiB held in caches", "oversub: p99 latency",
                 "migrate: throughput"):
        assert head in text
    assert "migrate: MiB held" not in text              # migrate records no cache bytes
    assert "| cpu-heaps | no cache (heaps) |" in text
    assert "| thread-sbc | thread cache, superblock cache 16 |" in text
    # 64 threads x 64 KiB = 4 MiB for the thread cache; 2 x 4 KiB for cache = cpu
    assert "4.00 ±0%" in text
    line = [ln for ln in text.splitlines() if ln.startswith("- `cache = cpu` against")]
    assert len(line) == 1 and "t=64 on 2 CPUs" in line[0], line
    assert "x: less)" in line[0] and line[0].endswith("(within noise)"), line[0]
    # no development target judged, no issue named (the section states ratios only)
    assert "target" not in text and "issue" not in text and "MISMATCH" not in text
    assert "`cpu-heaps` 0.6" in text and "(slower)" in text


def test_a_ratio_of_single_runs_decides_no_direction(tmp_path):
    """One repetition a group: the versus lines state their ratios without an interval and
    say so, as fmt.direction does, never faster or slower."""
    text = "\n".join(fronts.fronts_section(through_csv(runs(reps=1), tmp_path), "thread"))
    versus = [ln for ln in text.splitlines() if ln.startswith("- oversub t=64: ")]
    assert versus and all("throughput (one run, no interval)" in ln for ln in versus), versus
    assert not any(w in ln for ln in versus for w in ("(faster)", "(slower)", "noise"))
    cpu = [ln for ln in text.splitlines() if ln.startswith("- `cache = cpu` against")][0]
    assert cpu.endswith("(one run, no interval)"), cpu


def test_cpu_cache_bigger_or_slower_is_a_ratio_not_a_mismatch(tmp_path):
    key = "- `cache = cpu` against"
    fat = "\n".join(fronts.fronts_section(through_csv(runs(cpu_cache=512 * KIB), tmp_path)))
    assert "(0.250x: less)" in fat.split(key)[1] and "MISMATCH" not in fat
    slow = "\n".join(fronts.fronts_section(through_csv(runs(cpu_speed=0.5), tmp_path)))
    assert slow.split(key)[1].strip().endswith("(slower)") and "MISMATCH" not in slow


def test_without_cache_cpu_the_target_is_not_measured(tmp_path):
    text = "\n".join(fronts.fronts_section(through_csv(runs(with_cpu=False), tmp_path),
                                           "thread"))
    assert "not measured: this sweep has no `cache = cpu` front" in text


def test_no_section_without_oversub():
    rows = [r for r in runs() if r["workload_label"] != "oversub"]
    assert fronts.fronts_section(rows) == []
    assert fronts.fronts_plot(rows, "/nonexistent") == []


def test_plot_is_drawn(tmp_path):
    rows = through_csv(runs(), tmp_path)
    assert fronts.fronts_plot(rows, str(tmp_path)) == [fronts.PLOT]
    assert os.path.getsize(tmp_path / fronts.PLOT) > 0


def test_the_sweep_file():
    path = os.path.join(REPO, "configs", "sweeps", "fronts.ini")
    with open(path) as f:
        text = f.read()
    s = Sweep(text, path, ncores=2, strategies=["hoard2026", "hoard202607"])
    plan = s.expand()
    over = [r for r in plan if r["workload_label"] == "oversub"]
    assert sorted({r["threads"] for r in over}) == list(THREADS)
    assert all(r["workload"] == "threadtest" and str(r["params"]["cpus"]) == "2" and
               str(r["params"]["held"]) == "1" for r in over)
    assert {r["workload_label"] for r in plan} == {"oversub", "migrate"}
    variants = {r["variant"] for r in plan}
    assert {"thread", "thread-sbc", "cpu-heaps", "cpu", "tcmalloc"} <= variants


def hlbench(*args, preload=True):
    env = dict(os.environ, HOARD_STRATEGY="hoard2026")
    if preload:
        env["LD_PRELOAD"] = os.path.join(BDIR, "src", "libhoardlab.so")
    return subprocess.run([os.path.join(BDIR, "harness", "hlbench"), "threadtest"] +
                          list(args), capture_output=True, text=True, env=env, timeout=120)


@needs_built("harness/hlbench", "src/libhoardlab.so")
def test_threadtest_cpus_and_held():
    p = hlbench("--threads", "16", "--cpus", "1", "--held", "1", "--rounds", "3",
                "--blocks", "16000")
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert rec["extra"]["cpus_used"] == 1
    # 16 threads, each with its last round's 1000 blocks of 8 B in its TLAB
    assert rec["extra"]["cache_bytes"] >= 16 * 1000 * 16
    assert rec["params"]["cpus"] == 1
    plain = json.loads(hlbench("--threads", "2", "--rounds", "1").stdout)
    assert "cache_bytes" not in plain["extra"]          # held = 0: no waiting, no reading
    bad = hlbench("--threads", "2", "--cpus", "4096", preload=False)
    assert bad.returncode == 2 and "cpus = 4096" in bad.stderr
