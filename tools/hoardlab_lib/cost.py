"""`hoardlab cost`: instructions per malloc+free pair, counted by callgrind (exact and
repeatable, unlike time on a shared machine), for every compiled-in strategy and every
production allocator on this machine.

Each case runs harness/hlcost twice under callgrind, with PAIRS and 3 x PAIRS pairs; the cost
per pair is the slope, (I2 - I1) / (2 x PAIRS), so start-up and exit cancel. The same slope is
taken per function and source file (from the build's debug information), which splits a
hoardlab strategy's pair into
  front     the core's own code around the strategy: interpose.c, export.c, front.h, entry.h
            (init check, size routing, dispatch, free routing)
  counting  the statistics: the pair's cost less the same pair with counting = off (the
            fast paths built without counting, stats.h), measured as its own case
  strategy  the rest of libhoardlab.so: the strategy and the mechanisms it uses
and the rest (the loop in hlcost, the PLT) is `caller`, the same for every allocator.
core share = front + counting.
"""
import collections
import json
import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

from . import common
from .allocators import (CALLGRIND_LIBRARY, NOT_COUNTED, PRODUCTION, callgrind_library,
                         composed_rows, parse_allocator_spec, production_library, selection_env)
from .common import ToolError

FRONT_FILES = {"interpose.c", "export.c", "front.h", "entry.h"}
CASES = [("8", "local"), ("64", "local"), ("1000", "local"), ("64", "remote")]
PAIRS = 50000
LINE = re.compile(r"^\s*([\d,]+)\s+\([^)]*\)\s+(.*?):(\S+)(?:\s+\[(.*)\])?\s*$")


def case_name(size, mode):
    return "%s B" % size if mode == "local" else "%s B remote" % size


def valgrind_argv(args, direct):
    """(argv, executable) running valgrind with args. direct: exec callgrind's own binary as
    valgrind's launcher does, so the launcher, a program that mallocs, does not itself load an
    LD_PRELOAD that runs only under valgrind (CALLGRIND_LIBRARY)."""
    if not direct:
        return ["valgrind"] + args, None
    launcher = os.path.realpath(shutil.which("valgrind"))
    if os.path.exists(launcher + ".bin"):       # Debian's valgrind is a script around it
        launcher += ".bin"
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine)
    for d in (os.environ.get("VALGRIND_LIB"), "/usr/libexec/valgrind", "/usr/lib/valgrind",
              "/usr/local/libexec/valgrind"):
        tool = os.path.join(d or "", "callgrind-%s-linux" % arch)
        if d and os.path.isfile(tool):
            return [launcher] + args, tool
    raise ToolError("cost: callgrind-%s-linux not found in valgrind's folder (set VALGRIND_LIB)"
                    % arch)


def callgrind_functions(argv, env, workdir, direct=False):
    """Run argv under callgrind; {(file, function, object): Ir}, total Ir."""
    out = os.path.join(workdir, "cg.%d.out" % abs(hash(tuple(argv) + tuple(env.items()))))
    vg, tool = valgrind_argv(["--tool=callgrind", "--callgrind-out-file=" + out], direct)
    if tool:
        env = dict(env, VALGRIND_LAUNCHER=vg[0])
    p = subprocess.run(vg + argv, executable=tool, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise ToolError("callgrind failed (exit %d): %s\n%s"
                        % (p.returncode, " ".join(argv), p.stderr[-2000:]))
    a = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", out],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if a.returncode != 0:
        raise ToolError("callgrind_annotate failed: %s" % a.stderr[-500:])
    funcs, total = collections.Counter(), 0
    for line in a.stdout.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        ir = int(m.group(1).replace(",", ""))
        if m.group(3) == "TOTALS" or m.group(2).endswith("PROGRAM"):
            continue
        funcs[(os.path.basename(m.group(2)), m.group(3), os.path.basename(m.group(4) or ""))] += ir
    for line in a.stdout.splitlines():
        if "PROGRAM TOTALS" in line:
            total = int(line.split()[0].replace(",", ""))
    os.unlink(out)
    return funcs, total


def measure(bdir, allocator, size, mode, pairs, workdir):
    """One case: per-pair total and per-(file, function, object) slopes."""
    hlcost = os.path.join(bdir, "harness", "hlcost")
    env = dict(os.environ)
    for k in [k for k in env if k.startswith("HOARD_") or k == "LD_PRELOAD"]:
        del env[k]
    if allocator in PRODUCTION:
        lib = callgrind_library(allocator)
        if lib:
            env["LD_PRELOAD"] = lib
    else:
        env["LD_PRELOAD"] = common.require(bdir, "lib")
        base, knobs = parse_variant(allocator)
        env.update(selection_env(base))          # a strategy, or a composed row's file
        env.update({"HOARD_" + k.upper(): v for k, v in knobs.items()})
    runs = [callgrind_functions([hlcost, size, str(n), mode], env, workdir,
                                direct=allocator in CALLGRIND_LIBRARY)
            for n in (pairs, 3 * pairs)]
    (f1, t1), (f2, t2) = runs
    n = 2.0 * pairs
    funcs = {k: (f2[k] - f1[k]) / n for k in set(f1) | set(f2)}
    return {"allocator": allocator, "case": case_name(size, mode), "size": int(size),
            "mode": mode, "pairs": pairs, "pair": (t2 - t1) / n,
            "functions": {"%s:%s" % (k[0], k[1]): v for k, v in funcs.items() if abs(v) >= 0.05}}


def split(result, uncounted):
    """front / counting / strategy / caller shares of a hoardlab strategy's pair, given the
    pair's cost with counting = off."""
    parts = collections.Counter()
    for key, v in result["functions"].items():
        fname = key.split(":", 1)[0]
        if fname in FRONT_FILES:
            parts["front"] += v
        elif key.split(":", 1)[1] in ("main", "use") or fname == "???":
            parts["caller"] += v
    parts["uncounted"] = uncounted
    parts["counting"] = result["pair"] - uncounted
    parts["strategy"] = uncounted - parts["front"] - parts["caller"]
    return parts


UNCOUNTED = ":counting=off"


def parse_variant(name):
    """'hoard:remote_free=list:tlab=on' -> ('hoard', {'remote_free': 'list', 'tlab': 'on'}):
    a strategy with knobs, measured under its own name (parse_allocator_spec)."""
    return parse_allocator_spec(name)


def allocators(bdir, names=None):
    """(the allocators to measure, the hoardlab ones among them, which get the front /
    strategy split): every strategy and installed production allocator, or `names`, which may
    also name knob variants and composed rows (configs/rows: measured when named)."""
    strategies = [s for s, _ in common.hlconfig_strategies(bdir)]
    rows = list(composed_rows())
    production = []
    for p in PRODUCTION:
        try:
            production_library(p)
            production.append(p)
        except ToolError:
            pass
    every = strategies + production
    if names and set(names) & set(NOT_COUNTED):
        for n in sorted(set(names) & set(NOT_COUNTED)):
            common.log("cost: %s not counted: %s" % (n, NOT_COUNTED[n]))
        names = [n for n in names if n not in NOT_COUNTED]
        if not names:
            raise ToolError("cost: nothing to count (see above)")
    every = [n for n in every if n not in NOT_COUNTED]
    if names:
        for n in names:                 # a production allocator named but not installed
            if n in PRODUCTION and n not in production:
                production_library(n)        # raises: how to install it
        unknown = [n for n in names if parse_variant(n)[0] not in every + rows
                   or (parse_variant(n)[1] and n.split(":")[0] not in strategies + rows)]
        if unknown:
            raise ToolError("cost: unknown or missing allocator %s; available: %s; composed "
                            "rows: %s (a strategy or row may carry knobs: hoard:remote_free=list)"
                            % (", ".join(unknown), ", ".join(every), ", ".join(rows)))
        named = [n for n in names if ":" in n or n in rows]
        return [n for n in every if n in names] + named, strategies + named
    return every, strategies


def check(bdir, who="cost"):
    """Raise ToolError, one line, if valgrind or the build's hlcost is missing."""
    if not shutil.which("valgrind") or not shutil.which("callgrind_annotate"):
        raise ToolError("%s needs valgrind (Debian package valgrind; run tools/install-deps)"
                        % who)
    common.require(bdir, "lib")
    if not os.path.exists(os.path.join(bdir, "harness", "hlcost")):
        raise ToolError("%s needs hlcost, not found in %s/harness: run `tools/hoardlab build`"
                        % (who, bdir))


def valgrind_version():
    p = subprocess.run(["valgrind", "--version"], capture_output=True, text=True)
    return p.stdout.strip() or None


RUN_S = 0.3     # wall seconds per callgrind run at 2 jobs (the references: 55 runs, 15.4 s)


def estimate_s(names, cases=CASES):
    """Seconds `run` may take for `names`: each at every case, and a strategy's first case
    once more uncounted (counted for every name: an upper bound), for the progress line."""
    return len(names) * (len(cases) + 1) * RUN_S


def run(bdir, names=None, pairs=PAIRS, jobs=2, cases=CASES):
    """Every allocator at every case (size, mode); a strategy's first case also split."""
    check(bdir)
    names, strategies = allocators(bdir, names)
    with tempfile.TemporaryDirectory(prefix="hoardlab-cost-") as workdir:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(measure, bdir, a, s, m, pairs, workdir)
                       for a in names for s, m in cases]
            # each strategy once more at the first case, its fast paths built uncounted
            shares = [a for a in strategies if a in names and UNCOUNTED not in a]
            plain = [pool.submit(measure, bdir, a + UNCOUNTED, *cases[0], pairs, workdir)
                     for a in shares]
            results = [f.result() for f in futures]
            uncounted = {a: f.result()["pair"] for a, f in zip(shares, plain)}
    for r in results:
        if r["allocator"] in uncounted and r["case"] == case_name(*cases[0]):
            r.update({k: round(v, 1) for k, v in split(r, uncounted[r["allocator"]]).items()})
    return results


def table(results):
    """Markdown: one row per allocator, a column per case; then the core share per strategy."""
    cases = [case_name(s, m) for s, m in CASES]
    by = {(r["allocator"], r["case"]): r for r in results}
    order = list(dict.fromkeys(r["allocator"] for r in results))
    lines = ["| allocator | " + " | ".join(cases) + " |",
             "|---|" + "---|" * len(cases)]
    for a in order:
        lines.append("| %s | " % a + " | ".join("%.0f" % by[(a, c)]["pair"] for c in cases)
                     + " |")
    shares = [a for a in order if "front" in by[(a, cases[0])]]
    if shares:
        # results from before counting = off existed split by file: stats.h's lines
        counting = "counting" if "counting" in by[(shares[0], cases[0])] else "stats"
        lines += ["", "Core share per pair at %s (front + %s), and what the strategy's own "
                  "code costs%s:" % (cases[0], counting, "; `uncounted`: the same pair with "
                                     "counting = off, whose fast paths count nothing"
                                     if counting == "counting" else ""), "",
                  "| strategy | pair | %sfront | %s | core share | strategy | caller |"
                  % ("uncounted | " if counting == "counting" else "", counting),
                  "|---|---|---|---|---|---|---|" + ("---|" if counting == "counting" else "")]
        for a in shares:
            r = by[(a, cases[0])]
            lines.append("| %s | %.0f | %s%.1f | %.1f | %.1f | %.1f | %.1f |" % (
                a, r["pair"], "%.0f | " % r["uncounted"] if counting == "counting" else "",
                r["front"], r[counting], r["front"] + r[counting], r["strategy"], r["caller"]))
    return "\n".join(lines)


def functions_table(results):
    out = []
    for r in results:
        out.append("%s, %s: %.1f per pair" % (r["allocator"], r["case"], r["pair"]))
        for k, v in sorted(r["functions"].items(), key=lambda kv: -kv[1]):
            if v >= 0.5:
                out.append("  %7.1f  %s" % (v, k))
    return "\n".join(out)


def write(results, path):
    with open(path, "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
