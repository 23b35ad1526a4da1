"""The allocators a sweep file names, and their variants: [sweep] strategies (all, none or a
list), the [allocators] lines (label = base[, knob=value ...]), [sweep] only_where_named, the
[knobs] swept over them, and the variants that the cross product of [knobs] makes.

Each reader takes the Sweep being read (`sw`) for its messages (sw.error, sw.error_at) and
the labels read so far (sw.allocator_subset); the Sweep keeps what they return.
"""
import itertools

from ..common import ToolError, knob_key, split_commas
from ..allocators import allocator_kind, name_problem, parse_allocator_spec, production_library
from .values import split_list


def strategy_names(sw, text, strategies):
    """[sweep] strategies: all, none, or a list (checked against `strategies`)."""
    strat = text.strip()
    if strat == "all":
        if strategies is None:
            raise sw.error("strategies = all needs the built hlconfig "
                           "(run tools/hoardlab build)")
        return list(strategies)
    names = [] if strat in ("", "none") else split_list(strat)
    for n in names:         # a strategy or a composed row (all: the strategies only)
        if strategies is not None and name_problem(n, strategies, production=False):
            raise sw.error_at("sweep", "strategies",
                              name_problem(n, strategies, production=False))
    return names


def allocator_line(sw, label, spec, strategies):
    """One line of [allocators]: (label, base, knobs)."""
    base, knobs = parse_allocator_spec(spec)
    kind = allocator_kind(base)
    if kind == "production" and knobs:
        raise sw.error_at("allocators", label, "%s is a production allocator; knobs do "
                          "not apply" % base)
    if strategies is not None and name_problem(base, strategies):
        raise sw.error_at("allocators", label, name_problem(base, strategies))
    return label, base, knobs


def read_allocators(sw, cp, strategies):
    """(allocators, explicit): [(label, base, knobs)], the [sweep] strategies first (in
    hlconfig's order; a label of [allocators] replaces one), then [allocators]; explicit:
    those of [allocators]."""
    explicit = dict(cp["allocators"]) if cp.has_section("allocators") else {}
    names = strategy_names(sw, cp["sweep"].get("strategies", "none"), strategies)
    allocators = [(n, n, {}) for n in names if n not in explicit]
    lines = [allocator_line(sw, label, spec, strategies) for label, spec in explicit.items()]
    allocators += lines
    if not allocators:
        raise sw.error("no allocators (set [sweep] strategies or an [allocators] section)")
    return allocators, lines


def only_where_named(sw, cp, allocators):
    """[sweep] only_where_named: (named_only, not_installed): its labels, and those of them
    whose production library is missing (to be dropped from the sweep)."""
    named_only = split_list(cp["sweep"].get("only_where_named", ""))
    not_installed = []
    kinds = {a[0]: a[1] for a in allocators}
    for n in named_only:
        if n not in kinds or allocator_kind(kinds[n]) != "production":
            raise sw.error_at("sweep", "only_where_named", "%r is not a production "
                              "allocator of [allocators] (%s)" % (n, ", ".join(
                                  a[0] for a in allocators)))
        try:
            production_library(kinds[n])
        except ToolError:
            not_installed.append(n)
    return named_only, not_installed


def read_knobs(sw, cp):
    """[knobs]: (swept knobs, ordered {knob: [values]}, the allocator subset or None)."""
    values, subset = {}, None
    for k, v in (cp["knobs"].items() if cp.has_section("knobs") else ()):
        if k == "allocators":
            subset = sw.allocator_subset(v, "[knobs]")
            continue
        vals = split_commas(v)
        if not vals:
            raise sw.error("[knobs] %s has no values" % k)
        values[knob_key(k)] = vals
    return values, subset


def allocator_variants(allocators, knob_values, knob_allocators):
    """[(label, base, knobs, swept, variant)] of `allocators` after applying [knobs]."""
    res = []
    combos = [dict(zip(knob_values, vals)) for vals in itertools.product(*knob_values.values())] \
        if knob_values else [{}]
    for label, base, knobs in allocators:
        applies = (allocator_kind(base) == "hoardlab" and knob_values and
                   (knob_allocators is None or label in knob_allocators))
        for combo in (combos if applies else [{}]):
            k = dict(knobs)
            k.update(combo)
            variant = label
            if combo:
                variant += "[" + ",".join("%s=%s" % kv for kv in combo.items()) + "]"
            res.append((label, base, k, combo, variant))
    return res
