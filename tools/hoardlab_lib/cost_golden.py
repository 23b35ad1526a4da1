"""The fast paths' cost as a reviewed file (the practice of TCMalloc's golden fast-path files):
tests/golden/cost.txt holds `hoardlab cost` of libhoardlab's rows, and
tests/tools/test_cost_golden.py measures them again and fails when one differs, so a change to
a fast path shows as a diff of that file, rewritten by `tools/hoardlab cost --golden-update`.

The file is its own list of rows: a line is an allocator spec (a strategy, or a strategy with
knobs, as `cost -a` takes it) and its columns; a line with the spec alone is a row to measure,
so adding a row is adding that line and running --golden-update. Every compiled-in strategy
must have its bare row (--golden-update adds a missing one). Columns (instructions per
malloc+free pair, callgrind; hlcost pins its threads, so heaps chosen by processor repeat):
  local8, local64   one thread mallocs and frees one block, again and again
  remote64          a thread mallocs the blocks and exits; another thread frees them
  uncounted8        local8 with counting = off (the fast paths built without statistics)
callgrind's counts repeat, but not to the instruction in every row: hoard2026's rows moved by
up to 0.2 per pair between runs (8 B: 46.90 to 47.08 in four runs), and the remote64 cells by
up to 0.3 between days and machines with the source unchanged (3a0f8ae's tlab_prefetch=on row:
165.7 when the file was written, 165.94 here two days later, 166.0 on CI), so a cell differs
when it is more than TOLERANCE away from the file's; a change to a fast path moves a cell by a
whole instruction, or by its share of the pairs that take the changed branch.
Counts depend on the compiler and the build's options, so the file records them on its
`# build:` line; another build is not compared (the test skips, naming both). Production
allocators are not in the file: their counts depend on their own builds.
"""
import os

from . import common, cost, runkit
from .common import ToolError

PATH = os.path.join(common.REPO, "tests", "golden", "cost.txt")
COLUMNS = [("local8", ("8", "local")), ("local64", ("64", "local")),
           ("remote64", ("64", "remote"))]
UNCOUNTED = "uncounted8"                # the 8 B pair under counting = off (cost.run's split)
HEADER = [
    "# Instructions per malloc+free pair of libhoardlab's rows (tools/hoardlab cost, callgrind),",
    "# compared by tests/tools/test_cost_golden.py: a change to a fast path is a diff here.",
    "# Rewrite it (after looking at the diff):  tools/hoardlab cost --golden-update",
    "# Add a row: a line with its spec alone (strategy or strategy:knob=value:...), then the same.",
    "# local8/local64: malloc+free on one thread; remote64: malloc by a thread that exits, free",
    "# by another; uncounted8: local8 with counting = off. See tools/hoardlab_lib/cost_golden.py.",
]
TOLERANCE = 0.5
BUILD_OPTIONS = ("buildtype", "optimization", "b_ndebug", "b_sanitize", "stats", "checks",
                 "faults")


def build_line(bdir):
    """What the counts depend on besides the source: the compiler and the build's options."""
    c = runkit.compiler(bdir)
    opts = c.get("build_options", {})
    return "%s; %s" % (" ".join(str(c[k]) for k in ("id", "version") if c.get(k)),
                       ", ".join("%s=%s" % (k, opts.get(k)) for k in BUILD_OPTIONS))


def read(path=PATH):
    """(build line or None, [spec], {spec: {column: value string}}) of the golden file."""
    build, specs, values = None, [], {}
    names = [c for c, _ in COLUMNS] + [UNCOUNTED]
    with open(path) as f:
        for n, line in enumerate(f, 1):
            text = line.strip()
            if text.startswith("# build:"):
                build = text[len("# build:"):].strip()
            if not text or text.startswith("#") or text.split()[0] == "allocator":
                continue
            spec, *cells = text.split()
            if cells and len(cells) != len(names):
                raise ToolError("%s:%d: %s has %d columns; expected %s, or the spec alone"
                                % (path, n, spec, len(cells), " ".join(names)))
            specs.append(spec)
            values[spec] = dict(zip(names, cells))
    return build, specs, values


def rows(bdir, specs):
    """Every compiled-in strategy's bare row (in the registry's order), then the file's other
    rows in the file's order."""
    strategies = [s for s, _ in common.hlconfig_strategies(bdir)]
    return strategies + [s for s in specs if s not in strategies]


def measure(bdir, specs, jobs=2):
    """{spec: {column: value string}}: the golden columns of each spec, one decimal."""
    results = cost.run(bdir, specs, cases=[c for _, c in COLUMNS], jobs=jobs)
    out = {s: {} for s in specs}
    for r in results:
        for name, case in COLUMNS:
            if r["case"] == cost.case_name(*case):
                out[r["allocator"]][name] = "%.1f" % r["pair"]
                if "uncounted" in r:
                    out[r["allocator"]][UNCOUNTED] = "%.1f" % r["uncounted"]
    return out


def format_file(build, specs, values):
    names = [c for c, _ in COLUMNS] + [UNCOUNTED]
    width = max([len("allocator")] + [len(s) for s in specs]) + 2
    lines = HEADER + ["# build: %s" % build, "",
                      "allocator".ljust(width) + "".join(n.rjust(12) for n in names)]
    for s in specs:
        lines.append((s.ljust(width) + "".join(values[s].get(n, "?").rjust(12)
                                               for n in names)).rstrip())
    return "\n".join(lines) + "\n"


def differs(expected, measured):
    try:
        # both are one-decimal strings: round the difference, or 166.0 - 165.7 is 0.3000...1
        return round(abs(float(expected) - float(measured)), 1) > TOLERANCE
    except (TypeError, ValueError):         # no number in the file
        return True


def diff(expected, measured, specs):
    """Lines naming each row and column whose measured cost differs from the file's by more
    than TOLERANCE."""
    out = []
    for s in specs:
        for n, v in measured[s].items():
            if differs(expected.get(s, {}).get(n), v):
                out.append("  %-34s %-11s file %-8s measured %s"
                           % (s, n, expected.get(s, {}).get(n, "(none)"), v))
    return out


def check(bdir, path=PATH, jobs=2):
    """Measure the file's rows (and any strategy missing); [difference lines]."""
    cost.check(bdir, "cost golden")
    _, specs, expected = read(path)
    specs = rows(bdir, specs)
    return diff(expected, measure(bdir, specs, jobs), specs)


def update(bdir, path=PATH, jobs=2):
    """Measure the file's rows (and any strategy missing) and rewrite the file."""
    cost.check(bdir, "cost --golden-update")
    _, specs, _ = read(path) if os.path.exists(path) else (None, [], {})
    specs = rows(bdir, specs)
    with open(path, "w") as f:
        f.write(format_file(build_line(bdir), specs, measure(bdir, specs, jobs)))
    return specs
