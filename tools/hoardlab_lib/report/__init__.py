"""report.md: the taxonomy (Hoard Table 7) decided from measurements beside the paper's
claims, then the other published results the data of this sweep can speak to (Tables 3-6,
the uC++ padding experiment, Michael's producer-consumer), throughput and memory tables,
failures and plots. Every comparison with a paper (or with the design's claim) states its
rule and says whose claim it is; a disagreement is flagged as MISMATCH, never smoothed over,
and a difference inside the noise of the groups compared -- an interval that reaches the
claim, or 1 for a claimed effect (verdicts.check_claim) -- says "within noise"
(verdicts.NOISE_RULE). A development aim is no paper's claim: the report shows its ratio and
the direction the interval decides, judges no target and names no issue. Every measured
median is shown with its spread by one function, pm().

This package is the report: this file assembles it (write, and all_plots for its PNGs; and
busy_lines, machine_warnings: the header's words on its machine, which compare repeats); each
section is a module of its own listed once, in order, in SECTIONS. Sections use the notation
of ..fmt and the plotting kit of ..plotkit, never this file, so nothing imports upward."""

import os
from types import SimpleNamespace

from .. import fmt as F, verdicts as V
from . import (cost, failures, fronts, header, heapmaps, history, hoard, hoard2026, hugepages,
               knobs, latency, memory, michael, production, programs, remote, residual, series,
               survivors, taxonomy, throughput, ucpp)
from .header import busy_lines, machine_warnings
from .plots import all_plots, plots_section

__all__ = ("write", "all_plots", "busy_lines", "machine_warnings")

# The sections in the report's order: (the rows a section reads, how to call it with the
# report's context c). "bench": hlbench's rows, the sections skipped when a sweep ran only
# real programs; "all": every row.
KNOB_SECTION = ("bench", lambda c: knobs.knob_section(c.bench, c.meta, c.ncores))
SECTIONS = (
    ("all", lambda c: header.header(c.meta, c.rows, c.name)),
    ("all", lambda c: failures.failures(c.rows)),
    ("bench", lambda c: c.taxonomy_section()),
    ("bench", lambda c: hoard.sections(c.bench, c.ncores)),
    ("bench", lambda c: ucpp.ucpp(c.bench, c.ncores)),
    ("bench", lambda c: remote.remote_free_section(c.bench, c.rounds, c.ncores)),
    ("bench", lambda c: michael.michael_section(c.bench, c.rounds, c.ncores, c.outdir)),
    ("bench", lambda c: hoard2026.hoard2026_section(c.bench, c.rounds, c.ncores)),
    ("bench", lambda c: history.history_section(c.bench, c.rounds, c.ncores)),
    ("bench", lambda c: fronts.fronts_section(c.bench, c.baseline)),
    KNOB_SECTION,
    ("bench", lambda c: throughput.throughput_tables(c.merged, c.baseline, c.ncores)),
    ("bench", lambda c: production.production_section(c.merged)),
    ("bench", lambda c: memory.memory_tables(c.merged)),
    ("bench", lambda c: series.memory_over_time_section(c.bench)),
    ("bench", lambda c: survivors.section(c.bench)),
    ("bench", lambda c: hugepages.hugepages_section(c.bench, c.meta, c.ncores)),
    ("bench", lambda c: latency.latency_section(c.merged, c.ncores)),
    ("all", lambda c: programs.section(c.rows, c.meta)),
    ("all", lambda c: cost.cost_section(c.outdir, c.meta)),
    ("all", lambda c: heapmaps.heapmap_section(c.outdir)),
    ("bench", lambda c: residual.residual_section(c.outdir, c.bench)),
    ("all", lambda c: plots_section(c.plot_files, c.plot_errors)),
)


def leading_knob(sections, bench):
    """A sweep of one knob leads with that knob's section (after the header and failures):
    it is what the sweep asked."""
    if len(knobs.swept_knobs(bench)) != 1:
        return sections
    rest = [s for s in sections if s is not KNOB_SECTION]
    return rest[:2] + [KNOB_SECTION] + rest[2:]


class Context(SimpleNamespace):
    """What sections read: outdir, rows, bench (hlbench's rows), merged (bench with today's
    allocators' `today-<label>` runs read as `<label>`, so the per-workload tables show them
    beside the strategies), rounds, meta, ncores, baseline, name, plot_files, plot_errors;
    and the taxonomy, which write() returns."""

    def taxonomy_section(self):
        lines, self.taxonomy = taxonomy.taxonomy_section(self.bench, self.rounds, self.ncores,
                                                         self.meta)
        return lines


def write(outdir, rows, rounds, meta, plot_files, plot_errors, name=None):
    """report.md in outdir from the sweep's rows, rounds and meta.json, naming the plots
    drawn (and those that failed); returns (its path, the taxonomy's entries)."""
    sw = meta.get("sweep") or {}
    c = Context(outdir=outdir, rows=rows, rounds=rounds, meta=meta,
                ncores=F.cores_of(meta, rows), baseline=sw.get("baseline"),
                name=name or sw.get("name") or os.path.basename(outdir.rstrip("/")),
                bench=programs.bench_rows(rows), merged=V.relabel(programs.bench_rows(rows)),
                plot_files=plot_files,
                plot_errors=plot_errors, taxonomy=[])
    # a sweep of real programs alone has no hlbench sections
    bench = bool(c.bench) or not programs.program_rows(rows)
    lines = []
    for part, section in leading_knob(SECTIONS, c.bench):
        if part == "all" or bench:
            lines += section(c)
    path = os.path.join(outdir, "report.md")
    with open(path, "w") as f:
        f.write("\n".join(lines).rstrip() + "\n")
    return path, c.taxonomy
