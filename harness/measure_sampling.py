#!/usr/bin/env python3
"""The cost of hlbench's own sampling (issue 28): throughput with the memory series and the
latency sampler on and off, interleaved in one session.

    harness/measure_sampling.py HLBENCH [--rounds N] [--preload LIB --strategy S]
                                [--workload 'NAME ARGS...']...

Each round runs every workload once under each of four settings, in a rotated order:
off (--sample-interval 0 --latency-every 0), series (0.01, 0), latency (0, 64), both (the
defaults). Per workload and setting it prints the median over rounds of two ratios to off
taken within a round, with the smallest and largest such ratio (the spread): throughput
(ops per wall second) and CPU time per operation (user + system of the whole process, from
wait4: the sampler thread's own work included, and less sensitive than wall time to other
load on the machine); and the latency record's overhead_ns. One process per run."""
import argparse
import json
import os
import statistics
import subprocess

SETTINGS = {"off": ["--sample-interval", "0", "--latency-every", "0"],
            "series": ["--sample-interval", "0.01", "--latency-every", "0"],
            "latency": ["--sample-interval", "0", "--latency-every", "64"],
            "both": []}
DEFAULT = ["threadtest --threads 2 --scale 1", "larson --threads 2 --scale 0.03",
           "shbench --threads 2 --scale 0.1", "linux-scalability --threads 2 --scale 0.5"]


def run(cmd, env):
    """(record, CPU seconds of the process)"""
    with open(os.devnull, "w") as err:
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=err, text=True)
        out = p.stdout.read()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise SystemExit("%s: exit %d" % (" ".join(cmd), p.returncode))
    return json.loads(out), ru.ru_utime + ru.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("hlbench")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--preload")
    ap.add_argument("--strategy")
    ap.add_argument("--workload", action="append")
    a = ap.parse_args()
    env = dict(os.environ)
    if a.preload:
        env["LD_PRELOAD"], env["HOARD_STRATEGY"] = a.preload, a.strategy or "hoard"
    names = list(SETTINGS)
    for w in a.workload or DEFAULT:
        tp = {s: [] for s in names}
        cpu = {s: [] for s in names}
        overhead = []
        for r in range(a.rounds):
            for s in names[r % 4:] + names[:r % 4]:
                rec, seconds = run([a.hlbench] + w.split() + SETTINGS[s], env)
                tp[s].append(rec["throughput"])
                cpu[s].append(seconds / rec["ops"])
                if "latency" in rec:
                    overhead.append(rec["latency"]["overhead_ns"])
        print("%s (%s, %d rounds): off median %.3g ops/s; clock overhead %.1f ns"
              % (w, a.strategy or "glibc" if not a.preload else a.strategy, a.rounds,
                 statistics.median(tp["off"]), statistics.median(overhead)))
        for s in names[1:]:
            ratios = [x / o for x, o in zip(tp[s], tp["off"])]
            cr = [x / o for x, o in zip(cpu[s], cpu["off"])]
            print("  %-8s throughput / off: median %.3f (%.3f .. %.3f);  CPU per op / off: "
                  "median %.3f (%.3f .. %.3f)" % (s, statistics.median(ratios), min(ratios),
                                                   max(ratios), statistics.median(cr), min(cr),
                                                   max(cr)))
        noise = [y / x for x, y in zip(tp["off"], tp["off"][1:])]
        cn = [y / x for x, y in zip(cpu["off"], cpu["off"][1:])]
        print("  %-8s off / previous off:  %.3f .. %.3f;  CPU per op: %.3f .. %.3f (the noise)"
              % ("", min(noise), max(noise), min(cn), max(cn)))


if __name__ == "__main__":
    main()
