"""The `hoardlab` command line: a parser per subcommand (parse_NAME), listed in parser() in
--help's order, each naming its commands.cmd_NAME; main() runs one."""
import argparse
import os
import sys

from . import commands, cost as costmod, heapmap as heapmapmod, lab, runkit, slurm
from . import residual as residualmod
from .common import ToolError, log


def add_no_build(s):
    s.add_argument("--no-build", action="store_true",
                   help="do not run the incremental build first: measure the binaries "
                   "as they are (meta.json records whether they were out of date)")
    s.add_argument("--build", action="store_true", help=argparse.SUPPRESS)  # the default


def parse_build(sub):
    s = sub.add_parser("build", help="meson setup (if needed) and ninja")
    s.add_argument("-j", "--jobs", type=int)
    s.set_defaults(func=commands.cmd_build)


def parse_run(sub):
    s = sub.add_parser("run", help="run one workload under one allocator",
                       description="Run hlbench WORKLOAD once. Extra hlbench options go "
                       "after `--`.")
    s.add_argument("workload")
    s.add_argument("-a", "--allocator", default="hoard",
                   help="strategy, composed row or production allocator (`strategies` "
                   "lists them), with knobs: 'hoard:heap_select=cpu:tlab=on' (as cost -a), "
                   "'mimalloc-like:purge_delay=100', or 'concurrent, padding=on' (default hoard)")
    s.add_argument("-k", "--knob", action="append", help="knob override key=value (repeatable)")
    s.add_argument("-p", "--param", action="append",
                   help="workload parameter name=value, passed as --name value")
    s.add_argument("-t", "--threads", type=int, default=1)
    s.add_argument("--scale", type=float, default=1.0)
    s.add_argument("--seed", type=int, default=42)
    s.add_argument("--pin", action="store_true")
    s.add_argument("--timeout", type=float, default=runkit.RUN_TIMEOUT, help="seconds before "
                   "the run is stopped, it and every process it started (default %g; 0: no "
                   "limit)" % runkit.RUN_TIMEOUT)
    s.add_argument("--json", action="store_true", help="print hlbench's JSON records")
    add_no_build(s)
    s.set_defaults(func=runkit.interruptible()(commands.cmd_run))


def add_load_options(s):
    """The machine's other load (sweeps/load.py; the [sweep] keys of the same names, which these
    override)."""
    s.add_argument("--busy-threshold", metavar="CPUS", help="other processes' CPU use "
                   "above which a run is busy (default 0.5)")
    s.add_argument("--quiet-wait", metavar="SECONDS", help="longest wait before a run for "
                   "the other load to fall below the threshold (default 5; 0: no wait)")
    s.add_argument("--redo", metavar="SHARE", help="share of the planned runs that may be "
                   "redone when busy (default 0.1)")
    s.add_argument("--extra-time", metavar="SECONDS", help="time for more repetitions of "
                   "groups whose verdict is within noise (default 0; main: 120)")


def parse_sweep(sub):
    s = sub.add_parser("sweep", help="run a sweep file, write results/<date>-<name>/")
    s.add_argument("file")
    s.add_argument("--out", help="output directory (default results/<date>-<name>)")
    s.add_argument("--results", help="parent of the output directory (default results/)")
    s.add_argument("--seed", type=int, help="shuffle seed (default: the file's, else random)")
    s.add_argument("--dry-run", action="store_true", help="print the runs in order; run nothing")
    add_no_build(s)
    s.add_argument("-j", "--jobs", type=int, help="ninja jobs for the build")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    add_load_options(s)
    slurm.add_sweep_options(s)
    s.set_defaults(func=commands.cmd_sweep)


def parse_report(sub):
    s = sub.add_parser("report", help="redo plots and report.md of a results directory")
    s.add_argument("dir")
    s.add_argument("--baseline", help="allocator for relative throughput")
    s.set_defaults(func=commands.cmd_report)


def parse_compare(sub):
    s = sub.add_parser("compare", help="B against A per workload and thread count: faster, "
                       "slower or no significant difference (ratio of medians, bootstrap "
                       "interval)")
    s.add_argument("a", metavar="A", help="results folder (runs.csv)")
    s.add_argument("b", metavar="B", nargs="?", help="results folder; omit with --allocators")
    s.add_argument("--allocators", nargs=2, metavar=("X", "Y"),
                   help="compare allocator (variant) Y against X within folder A")
    s.add_argument("--metric", default="throughput",
                   help="a numeric runs.csv column (default throughput; wall_s: lower is "
                   "better)")
    s.set_defaults(func=commands.cmd_compare)


def parse_attribute(sub):
    s = sub.add_parser("attribute", help="from a base configuration to a target, one "
                       "element at a time in forward and reverse order: each element's "
                       "contribution per workload, and where the orders disagree "
                       "(interaction)", description="Elements are the keys whose effective "
                       "values differ (hlconfig --effective). See docs/tool.md.")
    s.add_argument("base", nargs="?", help="allocator with knobs, as run -a: hoard, "
                   "hoard:heap_select=cpu")
    s.add_argument("target", nargs="?", help="allocator with knobs: hoard202607, "
                   "hoard:heap_select=home")
    s.add_argument("-w", "--workload", action="append", help="workload[:scale=X][:param="
                   "value...] (repeatable, or comma-separated)")
    s.add_argument("-t", "--threads", default="P", help="thread counts, as a sweep's "
                   "(default P)")
    s.add_argument("-r", "--repetitions", type=int, default=3, help="default 3")
    s.add_argument("--order", help="the forward order: every differing key once, "
                   "comma-separated; key+key makes one element of several keys")
    s.add_argument("--metric", default="throughput", help="a numeric runs.csv column "
                   "(default throughput; e.g. peak_rss_kb, hoardlab.held_bytes_peak)")
    s.add_argument("--timeout", type=float, default=120, help="seconds per run (default 120)")
    s.add_argument("--seed", type=int, help="shuffle seed (default random, recorded)")
    s.add_argument("--out", help="output directory (default results/<date>-attribute-...)")
    s.add_argument("--results", help="parent of the output directory (default results/)")
    s.add_argument("--from", dest="from_dir", metavar="DIR", help="print the tables of a "
                   "folder an earlier attribute wrote (e.g. with another --metric); run nothing")
    s.add_argument("--dry-run", action="store_true", help="list the elements and both paths "
                   "(and check the workloads); run nothing")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    add_no_build(s)
    s.set_defaults(func=commands.cmd_attribute)


def parse_residual(sub):
    s = sub.add_parser("residual", help="how much of each real allocator's advantage over "
                       "hoard2026 its composed row's elements explain, per workload: attribute "
                       "hoard2026 -> row (both orders) and the row against the real allocator "
                       "in one sweep; the report's section 'Residual' and residual-share.png",
                       description="See docs/tool.md (Residual) and docs/rows.md. Not part of "
                       "the main job: at --scale 1 and 3 repetitions, all rows and workloads "
                       "run for tens of minutes.")
    s.add_argument("--rows", help="composed rows, comma-separated (default all: %s)"
                   % ", ".join(residualmod.ROWS))
    s.add_argument("--workloads", help="comma-separated (default all: %s)"
                   % ", ".join(residualmod.WORKLOADS))
    s.add_argument("--scale", type=float, default=1.0, help="multiplies every workload's own "
                   "scale (default 1: the sweeps' sizes)")
    s.add_argument("-r", "--repetitions", type=int, default=3, help="default 3")
    s.add_argument("-t", "--threads", default="P", help="thread counts, as a sweep's "
                   "(default P)")
    s.add_argument("--timeout", type=float, default=180, help="seconds per run (default 180)")
    s.add_argument("--seed", type=int, help="shuffle seed (default random, recorded)")
    s.add_argument("--out", help="output directory (default results/<date>-residual)")
    s.add_argument("--results", help="parent of the output directory (default results/)")
    s.add_argument("--dry-run", action="store_true", help="list every row's elements and "
                   "both paths and the number of runs; run nothing")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    add_load_options(s)
    add_no_build(s)
    s.set_defaults(func=commands.cmd_residual)


def parse_cost(sub):
    s = sub.add_parser("cost", help="instructions per malloc+free pair (callgrind), per "
                       "allocator and case, with the core's share")
    s.add_argument("-a", "--allocators", help="comma-separated (default: every strategy and "
                   "every production allocator present); a strategy may carry knobs: "
                   "hoard:remote_free=list")
    s.add_argument("--pairs", type=int, default=costmod.PAIRS,
                   help="pairs of the shorter run; the longer runs 3x (default %d)"
                   % costmod.PAIRS)
    s.add_argument("--functions", action="store_true",
                   help="also print the per-pair cost of every function and source file")
    s.add_argument("--json", help="write every measurement, per function, to this file")
    add_no_build(s)
    s.add_argument("-j", "--jobs", type=int, help="callgrind runs at once (default 2)")
    s.add_argument("--golden-update", action="store_true", help="measure the rows of "
                   "tests/golden/cost.txt (libhoardlab's reviewed fast-path costs) and rewrite it")
    s.set_defaults(func=commands.cmd_cost)


def parse_heapmap(sub):
    s = sub.add_parser("heapmap", help="the heap over time: run a workload under a heap "
                       "strategy with heap_log on; draw the heap map (PNG) and export a Chrome "
                       "trace-event file (Perfetto, chrome://tracing)",
                       description="Without arguments: %s under hoard at %d threads, scale "
                       "%g (about 3 s on an idle 2-core machine; it says what it does as it "
                       "goes). The log is kept to its first %d MiB, with a note when cut."
                       % (heapmapmod.WORKLOAD, heapmapmod.THREADS, heapmapmod.SCALE,
                          heapmapmod.LOG_CAP >> 20))
    s.add_argument("workload", nargs="?", default=heapmapmod.WORKLOAD,
                   help="an hlbench workload (default %s)" % heapmapmod.WORKLOAD)
    s.add_argument("-a", "--allocator", default="hoard",
                   help="a heap strategy, with knobs as run -a (default hoard)")
    s.add_argument("-t", "--threads", type=int, default=heapmapmod.THREADS,
                   help="default %d" % heapmapmod.THREADS)
    s.add_argument("-p", "--param", action="append",
                   help="workload parameter name=value, passed as --name value")
    s.add_argument("--interval", type=int, default=0,
                   help="heap_log_interval: ms between a heap's group-change lines (0: every "
                   "change; 10 makes a long run's log about 20 times smaller)")
    s.add_argument("--scale", type=float, default=heapmapmod.SCALE,
                   help="workload scale (default %g; 1 is the sweeps' size, minutes under "
                   "load)" % heapmapmod.SCALE)
    s.add_argument("--seed", type=int, default=42)
    s.add_argument("--out", default="results/heapmap", help="output directory (default "
                   "results/heapmap; a sweep's directory puts it in that report)")
    add_no_build(s)
    s.set_defaults(func=commands.cmd_heapmap)


def parse_strategies(sub):
    s = sub.add_parser("strategies", help="list strategies, composed rows and production "
                       "allocators")
    s.set_defaults(func=commands.cmd_strategies)


def parse_config(sub):
    s = sub.add_parser("config", help="configuration keys (hlconfig)")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--list", action="store_true", help="text table of every key (default)")
    g.add_argument("--json", action="store_true", help="the table as JSON")
    g.add_argument("--effective", action="store_true",
                   help="effective values and their source (with -a)")
    g.add_argument("--classes", action="store_true", help="size classes (with -a)")
    g.add_argument("--stats", action="store_true", help="the statistics: name, from (thread or "
                   "total), across (how processes combine: sum, largest, max), help")
    s.add_argument("-a", "--allocator", help="strategy or composed row with knobs: 'hoard, "
                   "empty_fraction=1/8'")
    s.set_defaults(func=commands.cmd_config)


def parse_layers(sub):
    s = sub.add_parser("layers", help="check that every file of libhoardlab and hlbench uses "
                       "only files of its own layer or below, that no files use each other in "
                       "a loop (objects and headers), and that no modules of tools/ import "
                       "each other in a loop; exit 1 on an upward edge or a loop not known")
    s.add_argument("--strict", action="store_true",
                   help="allow nothing: also fail on the known loops and upward edges "
                   "(layers/known.py)")
    s.add_argument("--faces", action="store_true",
                   help="only check that each folder of src/core is read through its face "
                   "F/F.h (layers/faces.py; every run checks it too): from the text, no build")
    add_no_build(s)
    s.set_defaults(func=commands.cmd_layers)


def parse_test(sub):
    s = sub.add_parser("test", help="install deps, build, C tests and tool tests; one "
                       "summary line")
    s.add_argument("-j", "--jobs", type=int)
    s.add_argument("--no-deps", action="store_true", help="skip tools/install-deps")
    s.add_argument("--strategy", metavar="NAME", help="only NAME's tests: the meson tests that "
                   "run under it (HOARD_STRATEGY=NAME, or NAME in their arguments), no pytest; "
                   "with --list, name them and run nothing")
    s.add_argument("--list", action="store_true", help="with --strategy: print the names of "
                   "its tests, run nothing")
    s.add_argument("--full", action="store_true", help="the whole product: every test under "
                   "every knob variant (meson option full_suite=true; without --full the "
                   "option is set back to false and the knob values run by the covering "
                   "design, tests/reliability/covering.py)")
    s.set_defaults(func=commands.cmd_test)


def parse_soak(sub):
    s = sub.add_parser("soak", help="the integrity stress under every strategy, knob values "
                       "rotated, until the time is up; operations, bytes verified and failures "
                       "per strategy; exit 1 on a failure")
    g = s.add_mutually_exclusive_group(required=True)
    g.add_argument("--minutes", type=float, help="how long to soak")
    g.add_argument("--seconds", type=float, help="the same in seconds (short tests)")
    s.add_argument("--threads", type=int, default=4, help="stress threads per run (default 4)")
    s.add_argument("--run-seconds", type=float, default=10.0,
                   help="longest single run (default 10)")
    s.add_argument("--seed", type=int, help="knob rotation and stress seeds (default random, "
                   "printed)")
    s.add_argument("--stress", help="the stress program (default <build>/tests/reliability/"
                   "rel_stress)")
    add_no_build(s)
    s.set_defaults(func=commands.cmd_soak)


def parse_main(sub):
    s = sub.add_parser("main", help="install deps, build, run the taxonomy sweep, print the "
                       "report's path")
    s.add_argument("-j", "--jobs", type=int)
    s.add_argument("--results", help="parent of the output directory (default results/)")
    s.add_argument("-q", "--quiet", action="store_true")
    add_load_options(s)
    s.set_defaults(func=commands.cmd_main)


def parser():
    p = argparse.ArgumentParser(
        prog="hoardlab", description="hoardlab: build, run, sweep and report on allocator "
        "strategies (see docs/tool.md)")
    p.add_argument("--build-dir", help="build directory (default: $HOARDLAB_BUILD_DIR or "
                   "build/)")
    common_opts = argparse.ArgumentParser(add_help=False)
    common_opts.add_argument("--build-dir", default=argparse.SUPPRESS,
                             help="build directory (default: $HOARDLAB_BUILD_DIR or build/)")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    sub.required = True
    _add = sub.add_parser

    def add_parser(*args, **kw):
        return _add(*args, parents=[common_opts], **kw)
    sub.add_parser = add_parser
    # the subcommands, in --help's order (slurm's: collect, slurm-task)
    for add in (parse_build,
                parse_run,
                parse_sweep,
                slurm.add_commands,
                parse_report,
                parse_compare,
                parse_attribute,
                parse_residual,
                parse_cost,
                parse_heapmap,
                parse_strategies,
                parse_config,
                parse_layers,
                parse_test,
                lab.add_commands,
                parse_soak,
                parse_main):
        add(sub)
    return p


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = []
    if "--" in argv:                      # `hoardlab run WORKLOAD ... -- hlbench options`
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    a = parser().parse_args(argv)
    a.extra = extra
    try:
        return a.func(a)
    except ToolError as e:
        log("hoardlab: %s" % e)
        return 2
    except KeyboardInterrupt:
        log("hoardlab: interrupted")
        return 130
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
