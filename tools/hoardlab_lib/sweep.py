"""Sweep files: INI -> a list of runs (allocators x workloads x threads x knob values x
repetitions), then a shuffled execution order from a recorded seed.

Format (documented in docs/tool.md):

    [sweep]
    name = taxonomy          ; results/<date>-<name>/
    strategies = all         ; every strategy `hlconfig --strategies` lists, or a list, or none
    threads = 1, P           ; integers, P = processors of this machine, 2P = twice that
    repetitions = 3
    scale = 0.2              ; hlbench --scale
    seed = 7                 ; shuffle seed; omit for a fresh one (recorded in meta.json)
    workload_seed = 42       ; hlbench --seed (+ repetition), the same for every allocator
    baseline = serial        ; allocator the relative-throughput plot divides by
    timeout = 120            ; seconds per run
    pin = off                ; hlbench --pin
    cost = yes               ; after the timed runs: callgrind instructions per malloc+free
                             ; pair of every strategy and the sweep's production allocators

    [allocators]             ; label = base[, knob=value ...]
    concurrent+pad = concurrent, padding=on
    jemalloc = jemalloc

    [knobs]                  ; cross product of values, applied to every hoardlab allocator
    empty_fraction = 1/8, 1/4, 1/2
    allocators = hoard       ; optional: only these allocators get the swept knobs

    [workload threadtest]    ; one section per workload (the label); keys override [sweep]
    workload = threadtest    ; the hlbench workload, default: the label
    threads = 1, 2
    knobs = census=on        ; knob overrides for hoardlab allocators in this workload only
    allocators = hoard, serial   ; optional subset
    rounds = 10              ; any other key: a workload parameter, passed as --rounds 10
"""
import configparser
import itertools
import random
import re

from .common import ToolError, PRODUCTION, allocator_kind, parse_allocator_spec, cores

SWEEP_KEYS = {"name", "description", "strategies", "threads", "repetitions", "scale", "seed",
              "workload_seed", "baseline", "timeout", "pin", "cost"}
WORKLOAD_KEYS = {"workload", "threads", "repetitions", "scale", "knobs", "allocators",
                 "timeout", "pin", "workload_seed"}
BOOL_TRUE = {"on", "1", "true", "yes"}
BOOL_FALSE = {"off", "0", "false", "no"}


def split_list(text):
    return [t.strip() for t in re.split(r"[,\s]+", text or "") if t.strip()]


def parse_threads(text, ncores=None, where="threads"):
    """'1, 2, P, 2P' -> sorted unique ints; P is the number of processors."""
    ncores = ncores or cores()
    vals = []
    for tok in split_list(text):
        m = re.fullmatch(r"(\d*)[Pp]", tok)
        if m:
            v = int(m.group(1) or 1) * ncores
        elif tok.isdigit():
            v = int(tok)
        else:
            raise ToolError("%s: %r is not a thread count (an integer, P or NP)" % (where, tok))
        if v < 1:
            raise ToolError("%s: thread count must be at least 1" % where)
        vals.append(v)
    if not vals:
        raise ToolError("%s: no thread counts" % where)
    return sorted(set(vals))


def parse_bool(text, where):
    t = str(text).strip().lower()
    if t in BOOL_TRUE:
        return True
    if t in BOOL_FALSE:
        return False
    raise ToolError("%s: %r is not on/off (or yes/no, true/false, 1/0)" % (where, text))


def parse_knob_list(text, where):
    """'census=on, padding=off' -> dict."""
    res = {}
    for part in [p.strip() for p in (text or "").split(",") if p.strip()]:
        if "=" not in part:
            raise ToolError("%s: %r is not key=value" % (where, part))
        k, v = part.split("=", 1)
        res[k.strip().lower().replace("-", "_")] = v.strip()
    return res


class Sweep:
    """A parsed sweep file. `expand()` gives the runs."""

    def __init__(self, text, path="<sweep>", ncores=None, strategies=None):
        self.path, self.text = path, text
        self.ncores = ncores or cores()
        cp = configparser.ConfigParser(inline_comment_prefixes=(";", "#"), interpolation=None,
                                       strict=True)
        cp.optionxform = str
        try:
            cp.read_string(text, source=path)
        except configparser.Error as e:
            raise ToolError("%s: %s" % (path, str(e).splitlines()[0]))
        if not cp.has_section("sweep"):
            raise ToolError("%s: no [sweep] section" % path)
        s = dict(cp["sweep"])
        for k in s:
            if k not in SWEEP_KEYS:
                raise ToolError("%s: [sweep] unknown key %r (known: %s)"
                                % (path, k, ", ".join(sorted(SWEEP_KEYS))))
        self.name = s.get("name") or re.sub(r"\.ini$", "", path.rsplit("/", 1)[-1])
        if not re.fullmatch(r"[A-Za-z0-9._+-]+", self.name):
            raise ToolError("%s: name %r: use letters, digits, . _ + -" % (path, self.name))
        self.description = s.get("description", "")
        self.threads = parse_threads(s.get("threads", "1"), self.ncores, "[sweep] threads")
        self.repetitions = self._int(s.get("repetitions", "1"), "[sweep] repetitions", 1)
        self.scale = self._float(s.get("scale", "1"), "[sweep] scale")
        self.seed = self._int(s["seed"], "[sweep] seed", 0) if "seed" in s else None
        self.workload_seed = self._int(s.get("workload_seed", "42"), "[sweep] workload_seed", 0)
        self.timeout = self._float(s.get("timeout", "300"), "[sweep] timeout")
        self.pin = parse_bool(s.get("pin", "off"), "[sweep] pin")
        self.cost = parse_bool(s.get("cost", "no"), "%s: [sweep] cost" % path)
        self.baseline = s.get("baseline", "").strip() or None

        # Allocators: strategies first (in hlconfig's order), then the labelled ones.
        self.allocators = []          # [(label, base, knobs)]
        strat = s.get("strategies", "none").strip()
        if strat == "all":
            if strategies is None:
                raise ToolError("%s: strategies = all needs the built hlconfig "
                                "(run tools/hoardlab build)" % path)
            names = list(strategies)
        elif strat in ("", "none"):
            names = []
        else:
            names = split_list(strat)
            if strategies is not None:
                for n in names:
                    if n not in strategies:
                        raise ToolError("%s: [sweep] strategies: unknown strategy %r (known: %s)"
                                        % (path, n, ", ".join(strategies)))
        explicit = dict(cp["allocators"]) if cp.has_section("allocators") else {}
        for n in names:
            if n not in explicit:
                self.allocators.append((n, n, {}))
        for label, spec in explicit.items():
            base, knobs = parse_allocator_spec(spec)
            kind = allocator_kind(base)
            if kind == "production" and knobs:
                raise ToolError("%s: [allocators] %s: %s is a production allocator; "
                                "knobs do not apply" % (path, label, base))
            if kind == "hoardlab" and strategies is not None and base not in strategies:
                raise ToolError("%s: [allocators] %s: unknown strategy or allocator %r "
                                "(strategies: %s; production: %s)"
                                % (path, label, base, ", ".join(strategies),
                                   ", ".join(PRODUCTION)))
            self.allocators.append((label, base, knobs))
        if not self.allocators:
            raise ToolError("%s: no allocators (set [sweep] strategies or an [allocators] "
                            "section)" % path)
        labels = [a[0] for a in self.allocators]

        # Swept knobs: ordered {knob: [values]}, plus an optional allocator subset.
        self.knob_values, self.knob_allocators = {}, None
        if cp.has_section("knobs"):
            for k, v in cp["knobs"].items():
                if k == "allocators":
                    self.knob_allocators = split_list(v)
                    for a in self.knob_allocators:
                        if a not in labels:
                            raise ToolError("%s: [knobs] allocators: %r is not an allocator"
                                            % (path, a))
                    continue
                vals = [x.strip() for x in v.split(",") if x.strip()]
                if not vals:
                    raise ToolError("%s: [knobs] %s has no values" % (path, k))
                self.knob_values[k.lower().replace("-", "_")] = vals

        variants = [v[4] for v in self.variants()]
        if self.baseline and self.baseline not in variants:
            raise ToolError("%s: baseline %r is not one of the allocators (%s)"
                            % (path, self.baseline, ", ".join(variants)))

        # Workloads.
        self.workloads = []           # dicts
        for sec in cp.sections():
            if not sec.startswith("workload"):
                if sec not in ("sweep", "allocators", "knobs"):
                    raise ToolError("%s: unknown section [%s]" % (path, sec))
                continue
            label = sec[len("workload"):].strip()
            if not label:
                raise ToolError("%s: [workload] needs a name: [workload threadtest]" % path)
            w = dict(cp[sec])
            where = "[%s]" % sec
            wl = {
                "label": label,
                "workload": w.get("workload", label),
                "threads": parse_threads(w["threads"], self.ncores, where + " threads")
                if "threads" in w else self.threads,
                "repetitions": self._int(w["repetitions"], where + " repetitions", 1)
                if "repetitions" in w else self.repetitions,
                "scale": self._float(w["scale"], where + " scale") if "scale" in w
                else self.scale,
                "timeout": self._float(w["timeout"], where + " timeout") if "timeout" in w
                else self.timeout,
                "pin": parse_bool(w["pin"], where + " pin") if "pin" in w else self.pin,
                "workload_seed": self._int(w["workload_seed"], where, 0)
                if "workload_seed" in w else self.workload_seed,
                "knobs": parse_knob_list(w.get("knobs", ""), where + " knobs"),
                "allocators": split_list(w["allocators"]) if "allocators" in w else None,
                "params": {k: v for k, v in w.items() if k not in WORKLOAD_KEYS},
            }
            if wl["allocators"]:
                for a in wl["allocators"]:
                    if a not in labels:
                        raise ToolError("%s: %s allocators: %r is not an allocator (%s)"
                                        % (path, where, a, ", ".join(labels)))
            self.workloads.append(wl)
        if not self.workloads:
            raise ToolError("%s: no [workload NAME] sections" % path)

    @staticmethod
    def _int(v, where, lo):
        try:
            x = int(str(v).strip())
        except ValueError:
            raise ToolError("%s: %r is not an integer" % (where, v))
        if x < lo:
            raise ToolError("%s: must be at least %d" % (where, lo))
        return x

    @staticmethod
    def _float(v, where):
        try:
            x = float(str(v).strip())
        except ValueError:
            raise ToolError("%s: %r is not a number" % (where, v))
        if x <= 0:
            raise ToolError("%s: must be positive" % where)
        return x

    def variants(self):
        """[(label, base, knobs, swept, variant)] after applying [knobs]."""
        res = []
        combos = [dict(zip(self.knob_values, vals))
                  for vals in itertools.product(*self.knob_values.values())] \
            if self.knob_values else [{}]
        for label, base, knobs in self.allocators:
            applies = (allocator_kind(base) == "hoardlab" and self.knob_values and
                       (self.knob_allocators is None or label in self.knob_allocators))
            for combo in (combos if applies else [{}]):
                k = dict(knobs)
                k.update(combo)
                variant = label
                if combo:
                    variant += "[" + ",".join("%s=%s" % kv for kv in combo.items()) + "]"
                res.append((label, base, k, combo, variant))
        return res

    def expand(self):
        """Every run of the sweep, in definition order; 'index' numbers them."""
        runs = []
        for wl in self.workloads:
            for label, base, knobs, swept, variant in self.variants():
                if wl["allocators"] is not None and label not in wl["allocators"]:
                    continue
                k = dict(knobs)
                if allocator_kind(base) == "hoardlab":
                    k.update(wl["knobs"])
                for t in wl["threads"]:
                    for rep in range(wl["repetitions"]):
                        runs.append({
                            "index": len(runs), "allocator": label, "variant": variant,
                            "base": base, "kind": allocator_kind(base), "knobs": k,
                            "swept": dict(swept), "workload_label": wl["label"],
                            "workload": wl["workload"], "params": dict(wl["params"]),
                            "threads": t, "scale": wl["scale"],
                            "seed": wl["workload_seed"] + rep, "repetition": rep,
                            "pin": wl["pin"], "timeout": wl["timeout"],
                        })
        return runs


def shuffled(runs, seed):
    """The execution order: a permutation of runs from `seed` (reproducible)."""
    order = list(range(len(runs)))
    random.Random(seed).shuffle(order)
    return [runs[i] for i in order]


def load(path, ncores=None, strategies=None):
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise ToolError("%s: %s" % (path, e.strerror))
    return Sweep(text, path, ncores=ncores, strategies=strategies)
