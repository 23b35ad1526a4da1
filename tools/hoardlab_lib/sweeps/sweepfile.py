"""A sweep file: INI -> a list of runs (allocators x workloads x threads x knob values x
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
    busy_threshold = 0.5     ; other processes' CPU use (in CPUs) above which a run is busy
    quiet_wait = 5           ; seconds a run may wait for the others' load to fall below it
    redo = 0.1               ; share of the planned runs that may be redone when busy
    extra_time = 0           ; seconds of more repetitions for groups within noise
    calibrate = no           ; grow a workload's scale until its shortest run lasts 0.15 s
    only_where_named = glibc ; production allocators that run only in the workloads whose
                             ; `allocators` names them, and are left out (no error) when
                             ; their library is not installed (sw.not_installed)

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

    [program sqlite]         ; a real program (tools/hoardlab_lib/programs/, docs/tool.md)
    command = sqlite3 db < {repo}/configs/programs/queries.sql
"""
import configparser
import random
import re

from ..common import ToolError, cores, knob_key, parse_bool
from . import workloads as W
from .variants import allocator_variants, only_where_named, read_allocators, read_knobs
from .values import RUN_SETTINGS, SWEEP_KEYS, load_policy, parse_int, split_list


class Sweep:
    """A parsed sweep file. `expand()` gives the runs. Each section is read by a method of
    its own, in this order (which is the order of the checks). error, error_at, line_of,
    run_settings and allocator_subset are public: the readers of variants.py and of a
    [program] section (programs/spec.py) use them."""

    def __init__(self, text, path="<sweep>", ncores=None, strategies=None):
        self.path, self.text = path, text
        self.ncores = ncores or cores()
        cp = self._read_ini()
        self._read_sweep(cp)
        self._read_allocators(cp, strategies)
        self._read_knobs(cp)
        self._check_baseline()
        self._read_workloads(cp)

    def error(self, msg):
        """'FILE: msg' as a ToolError."""
        return ToolError("%s: %s" % (self.path, msg))

    def line_of(self, section, key=None):
        """The line of `key` in [section] (the last, as configparser keeps the last), or of the
        section's header when key is None; 0 if not found."""
        cur, found = None, 0
        for n, line in enumerate(self.text.splitlines(), 1):
            t = line.strip()
            m = re.fullmatch(r"\[(.+)\]", t)
            if m:
                cur = m.group(1)
                if cur == section and key is None:
                    return n
            elif cur == section and key is not None and t and t[0] not in ";#":
                k = re.split(r"[=:]", t, 1)[0]
                if knob_key(k) == knob_key(key):
                    found = n
        return found

    def error_at(self, section, key, msg):
        """'FILE:LINE: [SECTION] KEY: msg' as a ToolError."""
        return ToolError("%s:%d: [%s]%s: %s" % (self.path, self.line_of(section, key), section,
                                                " " + key if key else "", msg))

    def _read_ini(self):
        cp = configparser.ConfigParser(inline_comment_prefixes=(";", "#"), interpolation=None,
                                       strict=True)
        cp.optionxform = str
        try:
            cp.read_string(self.text, source=self.path)
        except configparser.Error as e:
            raise self.error(str(e).splitlines()[0])
        return cp

    def run_settings(self, sec, where, inherited=None):
        """RUN_SETTINGS of a section: each key it sets, else `inherited`, else the default."""
        res = {}
        for key, (default, parse) in RUN_SETTINGS.items():
            if key in sec or inherited is None:
                res[key] = parse(sec.get(key, default), "%s %s" % (where, key), self.ncores)
            else:
                res[key] = inherited[key]
        return res

    def _read_sweep(self, cp):
        """[sweep]: the name, the run settings (also self.threads, self.pin, ...), seed,
        cost, baseline."""
        if not cp.has_section("sweep"):
            raise self.error("no [sweep] section")
        s = dict(cp["sweep"])
        for k in s:
            if k not in SWEEP_KEYS:
                raise self.error("[sweep] unknown key %r (known: %s)"
                                 % (k, ", ".join(sorted(SWEEP_KEYS))))
        self.name = s.get("name") or re.sub(r"\.ini$", "", self.path.rsplit("/", 1)[-1])
        if not re.fullmatch(r"[A-Za-z0-9._+-]+", self.name):
            raise self.error("name %r: use letters, digits, . _ + -" % self.name)
        self.description = s.get("description", "")
        self.settings = self.run_settings(s, "[sweep]")
        vars(self).update(self.settings)
        self.seed = parse_int(s["seed"], "[sweep] seed", 0) if "seed" in s else None
        self.cost = parse_bool(s.get("cost", "no"), "%s: [sweep] cost" % self.path)
        self.calibrate = parse_bool(s.get("calibrate", "no"), "%s: [sweep] calibrate" % self.path)
        self.baseline = s.get("baseline", "").strip() or None
        self.load = load_policy(s, lambda k: "%s:%d: [sweep] %s" % (
            self.path, self.line_of("sweep", k), k))

    def _read_allocators(self, cp, strategies):
        """self.allocators = [(label, base, knobs)] (variants.py), less those of [sweep]
        only_where_named whose library is missing (self.not_installed)."""
        self.allocators, self.explicit = read_allocators(self, cp, strategies)
        self.named_only, self.not_installed = only_where_named(self, cp, self.allocators)
        self.allocators = [a for a in self.allocators if a[0] not in self.not_installed]
        self.explicit = [a for a in self.explicit if a[0] not in self.not_installed]
        self.labels = [a[0] for a in self.allocators]

    def _read_knobs(self, cp):
        """[knobs]: swept knobs, ordered {knob: [values]}, and an optional allocator subset."""
        self.knob_values, self.knob_allocators = read_knobs(self, cp)

    def variants(self):
        """[(label, base, knobs, swept, variant)] after applying [knobs]."""
        return allocator_variants(self.allocators, self.knob_values, self.knob_allocators)

    def allocator_subset(self, text, where):
        """`allocators = a, b` of [knobs] or a workload: labels of self.allocators."""
        names = [a for a in split_list(text) if a not in getattr(self, "not_installed", ())]
        for a in names:
            if a not in self.labels:
                raise self.error("%s allocators: %r is not an allocator (%s)"
                                 % (where, a, ", ".join(self.labels)))
        return names

    def _check_baseline(self):
        variants = [v[4] for v in self.variants()]
        if self.baseline and self.baseline not in variants:
            raise self.error("baseline %r is not one of the allocators (%s)"
                             % (self.baseline, ", ".join(variants)))

    def _read_workloads(self, cp):
        """self.workloads: one dict per [workload LABEL] or [program LABEL] (workloads.py)."""
        W.read_workloads(self, cp)

    def expand(self):
        """Every run of the sweep, in definition order; 'index' numbers them."""
        return W.expand(self)

    def knob_origins(self):
        """((section, key), knob) for every knob the file names."""
        return W.knob_origins(self)

    def knob_origin(self, run, knob):
        """(section, key) of the line that gave `run` its `knob`."""
        return W.knob_origin(self, run, knob)


def shuffled(runs, seed):
    """The execution order: a permutation of runs from `seed` (reproducible)."""
    order = list(range(len(runs)))
    random.Random(seed).shuffle(order)
    return [runs[i] for i in order]


def read_sweep(path, ncores=None, strategies=None):
    """The Sweep of the file at `path`."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise ToolError("%s: %s" % (path, e.strerror))
    return Sweep(text, path, ncores=ncores, strategies=strategies)
