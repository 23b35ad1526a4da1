"""`hoardlab attribute`: how much of the difference between two configurations does each
design element make, and do the elements interact?

Given a base and a target allocator-with-knobs (the one syntax of `run -a`: `hoard`,
`hoard202607`, `hoard:heap_select=cpu`), the keys that differ are read from the build: each
side's effective configuration (`hlconfig --effective`, so a strategy row's `.defaults` count
as much as knobs written out), compared key by key. Each differing key is an element (or a
group of keys written `a+b` in --order). Two paths go from base to target, adding one element
a step: in the forward order and in the reverse order. A key that acts only with another's
value (a TLAB knob needs `tlab=on`; the start-up check refuses it alone) comes after that one
in both paths; keys that need each other become one element. Every step runs on the base's
strategy with the target's values of the elements added so far; the last step is the target
itself, so the contributions of a path multiply to target / base.

An element's contribution is the ratio of the metric's median at the step that adds it to
the median at the step before (with the interval of a ratio of medians, verdicts.ratio). When
the two orders give intervals that do not overlap, the element's effect depends on which
others are already there: an interaction. Intervals that overlap decide nothing
(verdicts.NOISE_RULE).

The runs are a generated sweep file handed to the sweep runner (cli.run_sweep): interleaved in
a shuffled order, repetitions, runs.csv and report.md as for any sweep; attribution.json (the
plan) and attribution.md (the tables) beside them. This module plans and computes; it runs
nothing itself."""
import json
import os
import re
import subprocess

from . import fmt as F, runkit, verdicts as V
from .common import ToolError, require
from .allocators import allocator_env, parse_allocator_spec, row_config

EFFECTIVE = re.compile(r"^(?:hoardlab: )?(\w+)\s*=\s*(.*?)\s*\((\w+)\)\s*$")
# Keys that say which configuration runs rather than how it allocates.
NOT_ELEMENTS = {"strategy", "verbose"}


def effective(bdir, base, knobs):
    """{key: value} of `hlconfig --effective` under the allocator's environment, in the
    table's order; ToolError with hlconfig's one line if it refuses the configuration."""
    env = allocator_env(base, knobs, bdir)
    env.pop("LD_PRELOAD", None)          # hlconfig links the core itself
    p = subprocess.run([require(bdir, "hlconfig"), "--effective"], env=env,
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        msg = (p.stderr or p.stdout).strip().splitlines()
        raise ToolError("%s: %s" % (spec_text(base, knobs), msg[-1] if msg else
                                    "hlconfig --effective: exit %d" % p.returncode))
    res = {}
    for line in (p.stdout + p.stderr).splitlines():
        m = EFFECTIVE.match(line.strip())
        if m:
            res[m.group(1)] = m.group(2)
    return res


def spec_text(base, knobs):
    return base + "".join(":%s=%s" % kv for kv in knobs.items())


def differing(base_eff, target_eff):
    """[(key, target's value)] of the keys whose effective values differ, in table order."""
    return [(k, v) for k, v in target_eff.items()
            if k not in NOT_ELEMENTS and base_eff.get(k) != v]


def elements(diff, order=None):
    """The elements: [(name, {key: value})]. `order` (a list of 'key' or 'key+key' tokens)
    names every differing key once; without it each key is an element, in table order."""
    vals = dict(diff)
    if not order:
        return [(k, {k: v}) for k, v in diff]
    res, seen = [], set()
    for tok in order:
        keys = [k.strip() for k in tok.split("+") if k.strip()]
        for k in keys:
            if k not in vals:
                raise ToolError("--order: %r does not differ between base and target (the keys "
                                "that do: %s)" % (k, ", ".join(vals) or "none"))
            if k in seen:
                raise ToolError("--order: %r named twice" % k)
            seen.add(k)
        res.append(("+".join(keys), {k: vals[k] for k in keys}))
    missing = [k for k in vals if k not in seen]
    if missing:
        raise ToolError("--order leaves out keys that differ: %s" % ", ".join(missing))
    return res


def merge(els, i, j):
    """els with elements i and j made one (at the smaller index)."""
    i, j = sorted((i, j))
    name = els[i][0] + "+" + els[j][0]
    knobs = dict(els[i][1], **els[j][1])
    return els[:i] + [(name, knobs)] + els[i + 1:j] + els[j + 1:]


def step_sets(order):
    """A path as a list of frozensets of element indexes: empty, then one more element of
    `order` a step, ending with every element."""
    return [frozenset(order[:k]) for k in range(len(order) + 1)]


class Plan:
    """Base, target, the elements, the two orders (lists of element indexes; by default
    0..n-1 and its reverse), and every configuration the two paths visit:
    configs = [(label, base, knobs, set of element indexes)], a set visited by both paths
    once (under its forward label)."""

    def __init__(self, base_spec, target_spec, els, fwd=None, rev=None, base=None,
                 target=None):
        self.base_spec, self.target_spec = base_spec, target_spec
        self.base, self.base_knobs = base or parse_allocator_spec(base_spec)
        self.target, self.target_knobs = target or parse_allocator_spec(target_spec)
        self.elements = els
        n = len(els)
        self.fwd_order = list(range(n)) if fwd is None else list(fwd)
        self.rev_order = list(reversed(range(n))) if rev is None else list(rev)
        self.fwd, self.rev = step_sets(self.fwd_order), step_sets(self.rev_order)
        self.configs, self.label_of = [], {}
        for prefix, path in (("f", self.fwd), ("r", self.rev)):
            for s in path:
                if s in self.label_of:
                    continue
                if not s:
                    label, base_, knobs = "base", self.base, dict(self.base_knobs)
                elif len(s) == n:
                    label, base_, knobs = "target", self.target, dict(self.target_knobs)
                else:
                    label, base_, knobs = "%s%d" % (prefix, len(s)), self.base, \
                        dict(self.base_knobs)
                    for i in sorted(s):
                        knobs.update(els[i][1])
                self.label_of[s] = label
                self.configs.append((label, base_, knobs, s))

    def to_json(self):
        return {"base": self.base_spec, "target": self.target_spec,
                "elements": [{"name": n, "knobs": k} for n, k in self.elements],
                "forward": self.fwd_order, "reverse": self.rev_order,
                "configs": [{"label": la, "base": b, "knobs": k, "elements": sorted(s)}
                            for la, b, k, s in self.configs]}

    @classmethod
    def from_json(cls, d):
        return cls(d["base"], d["target"], [(e["name"], e["knobs"]) for e in d["elements"]],
                   d.get("forward"), d.get("reverse"))


def plan(bdir, base_spec, target_spec, order=None, strategies=None):
    """The Plan from base to target, checked against the build: both ends start, and so does
    every step of both paths. A key that acts only with another's value (a TLAB knob without
    `tlab=on`) cannot come before it: each path takes, a step at a time, the first element of
    its wished order (forward: `order` or the table's; reverse: the opposite) that the start-up
    check accepts; when none is accepted, the first two left become one element."""
    b, bk = parse_allocator_spec(base_spec)
    t, tk = parse_allocator_spec(target_spec)
    for spec, (s, k) in ((base_spec, (b, bk)), (target_spec, (t, tk))):
        runkit.check_allocator(bdir, s, k, strategies or [], "attribute %s" % spec)
    if strategies is not None and b not in strategies and not row_config(b):
        raise ToolError("attribute: the base must be a hoardlab strategy or composed row (%s)"
                        % base_spec)
    diff = differing(effective(bdir, b, bk), effective(bdir, t, tk))
    if not diff:
        raise ToolError("attribute: %s and %s have the same effective configuration"
                        % (base_spec, target_spec))
    els = elements(diff, order)
    while True:
        accepted = {}

        def ok(s, els=els):
            if len(s) == len(els):      # the target itself, checked above
                return True
            if s not in accepted:
                knobs = dict(bk)
                for i in sorted(s):
                    knobs.update(els[i][1])
                accepted[s] = runkit.knob_problem(bdir, b, knobs) is None
            return accepted[s]
        n = len(els)
        fwd, stuck = _greedy(list(range(n)), ok)
        if not stuck:
            rev, stuck = _greedy(list(reversed(range(n))), ok)
        if not stuck:
            return Plan(base_spec, target_spec, els, fwd, rev, (b, bk), (t, tk))
        els = merge(els, stuck[0], stuck[1])


def _greedy(wish, ok):
    """(order, None): `wish` with each element as early as ok() allows; or (None, the
    elements left) when none of them can be added next."""
    order, left = [], list(wish)
    while left:
        nxt = next((i for i in left if ok(frozenset(order + [i]))), None)
        if nxt is None:
            return None, left
        order.append(nxt)
        left.remove(nxt)
    return order, None


def sweep_text(p, workloads, threads, repetitions, timeout, name):
    """A sweep file running every configuration of the plan on the workloads: [(label,
    workload, {setting or parameter: value})]."""
    out = ["; generated by `hoardlab attribute %s %s` (docs/tool.md)" % (p.base_spec,
                                                                         p.target_spec),
           "[sweep]", "name = %s" % name,
           "description = attribution from %s to %s, one element a step, forward and reverse"
           % (p.base_spec, p.target_spec),
           "threads = %s" % threads, "repetitions = %d" % repetitions, "baseline = base",
           "timeout = %g" % timeout, "", "[allocators]"]
    for label, base, knobs, _ in p.configs:
        out.append("%s = %s" % (label, ", ".join([base] + ["%s=%s" % kv for kv in
                                                           knobs.items()])))
    for label, wl, settings in workloads:
        out += ["", "[workload %s]" % label]
        if wl != label:
            out.append("workload = %s" % wl)
        out += ["%s = %s" % kv for kv in settings.items()]
    return "\n".join(out) + "\n"


def dry_run_text(p):
    n = len(p.elements)
    out = ["attribute: %s -> %s, %d element%s (%d configurations)" % (
        p.base_spec, p.target_spec, n, "" if n == 1 else "s", len(p.configs))]
    for i, (name, knobs) in enumerate(p.elements):
        out.append("  element %d: %s  (%s)" % (i + 1, name, ", ".join(
            "%s=%s" % kv for kv in knobs.items())))
    for title, path in (("forward", p.fwd), ("reverse", p.rev)):
        out.append("%s order:" % title)
        for k, s in enumerate(path):
            label, base, knobs, _ = next(c for c in p.configs if c[3] == s)
            added = "" if k == 0 else " + " + p.elements[next(iter(s - path[k - 1]))][0]
            out.append("  %2d %-7s %s%s" % (k, label, spec_text(base, knobs), added))
    if p.target != p.base:
        out.append("The steps run %s with knobs; the last is %s itself, so its element also "
                   "carries whatever else differs between the two strategies." % (p.base,
                                                                                  p.target))
    return "\n".join(out)


# --- the computation (also used by report_history on a sweep's own rows) ------------------

def attribution(p, measure):
    """Per element: {name, forward, reverse, verdict}. `measure(label)` is the Spread of the
    metric at a configuration (None if not measured). forward/reverse are Spreads of the
    ratio to the step before; verdict is 'interaction', 'same within noise', or why neither
    can be said."""
    n = len(p.elements)
    m = {c[0]: measure(c[0]) for c in p.configs}
    ratios = {}
    for key, path in (("forward", p.fwd), ("reverse", p.rev)):
        for k in range(1, n + 1):
            i = next(iter(path[k] - path[k - 1]))
            ratios[(key, i)] = V.ratio(m[p.label_of[path[k]]], m[p.label_of[path[k - 1]]])
    res = []
    for i, (name, _) in enumerate(p.elements):
        f, r = ratios[("forward", i)], ratios[("reverse", i)]
        if f is None or r is None:
            verdict = "not measured"
        elif n == 1:
            verdict = "one element: the orders are one path"
        elif min(f.n, r.n) < 2:
            verdict = "one repetition: no spread"
        else:
            verdict = "same within noise" if V.differ(f, r) is None else "interaction"
        res.append({"name": name, "forward": f, "reverse": r, "verdict": verdict})
    return res, V.ratio(m["target"], m["base"]), m["base"], m["target"]


def measure_rows(rows, metric, workload_label, threads, variant_of=lambda label: label):
    """measure() over a results folder's rows: the Spread of `metric` over the ok runs of the
    configuration's variant."""
    def measure(label):
        return V.spread_of([r.get(metric) for r in V.ok(rows)
                            if r["variant"] == variant_of(label) and
                            r["workload_label"] == workload_label and r["threads"] == threads])
    return measure


def table_lines(p, rows, metric="throughput", variant_of=lambda label: label, note=True):
    """Markdown: one table per workload and thread count of the rows; with `note`, the
    paragraph that reads them after the tables (the residual section says it once)."""
    fmt = F.si
    out = []
    groups = sorted({(r["workload_label"], r["threads"]) for r in V.ok(rows)
                     if r["variant"] in {variant_of(c[0]) for c in p.configs}})
    for wl, t in groups:
        res, total, mb, mt = attribution(p, measure_rows(rows, metric, wl, t, variant_of))
        out += ["**%s, %d thread%s** — %s: base %s, target %s, target / base %s" % (
            wl, t, "" if t == 1 else "s", metric, F.pm(mb, fmt), F.pm(mt, fmt),
            F.pm(total, "%.2f")), ""]
        out += [F.table(["element", "forward: ratio to the step before",
                         "reverse: ratio to the step before", "orders"],
                        [[e["name"], F.pm(e["forward"], "%.3f"), F.pm(e["reverse"], "%.3f"),
                          e["verdict"]] for e in res]), ""]
    if not groups:
        out += ["No configuration of the plan was measured.", ""]
    elif note:
        out += ["A ratio is the median of %s at the step that adds the element over the median "
                "at the step before (above 1: the element raises it); the forward ratios "
                "multiply to target / base, and so do the reverse ones. *interaction*: the two "
                "orders' intervals do not overlap, so the element's effect depends on which "
                "others are already there; *same within noise*: they overlap. %s"
                % (metric, V.NOISE_RULE), ""]
    return out


def write_plan(p, outdir):
    with open(os.path.join(outdir, "attribution.json"), "w") as f:
        json.dump(p.to_json(), f, indent=2)
        f.write("\n")


def read_plan(outdir):
    path = os.path.join(outdir, "attribution.json")
    try:
        with open(path) as f:
            return Plan.from_json(json.load(f))
    except (OSError, ValueError, KeyError) as e:
        raise ToolError("%s: no attribution plan (%s): a folder written by `hoardlab "
                        "attribute`" % (outdir, e))


def report(outdir, metric="throughput"):
    """attribution.md of a folder that `hoardlab attribute` ran; returns its text."""
    p = read_plan(outdir)
    rows = runkit.read_csv(os.path.join(outdir, "runs.csv"))
    lines = ["# Attribution: %s -> %s" % (p.base_spec, p.target_spec), ""]
    lines += ["Elements, forward order: %s." % ", ".join(
        "%s (%s)" % (n, ", ".join("%s=%s" % kv for kv in k.items())) for n, k in p.elements),
        ""]
    lines += table_lines(p, rows, metric)
    text = "\n".join(lines).rstrip() + "\n"
    with open(os.path.join(outdir, "attribution.md"), "w") as f:
        f.write(text)
    return text
