"""The values a sweep file's keys take, each parsed with the place it came from in its
message: thread counts (1, P, 2P), integers, numbers, lists; the machine's other load
(load.py) as [sweep]'s LOAD_KEYS set it, and the run settings a [workload] inherits.
"""
import re

from ..common import ToolError, cores, parse_bool
from . import load

SWEEP_KEYS = {"name", "description", "strategies", "threads", "repetitions", "scale", "seed",
              "workload_seed", "baseline", "timeout", "pin", "cost", "busy_threshold",
              "quiet_wait", "redo", "extra_time", "calibrate", "only_where_named"}
WORKLOAD_KEYS = {"workload", "threads", "repetitions", "scale", "knobs", "allocators",
                 "timeout", "pin", "workload_seed"}


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


def parse_int(v, where, lo):
    try:
        x = int(str(v).strip())
    except ValueError:
        raise ToolError("%s: %r is not an integer" % (where, v))
    if x < lo:
        raise ToolError("%s: must be at least %d" % (where, lo))
    return x


def parse_positive(v, where):
    try:
        x = float(str(v).strip())
    except ValueError:
        raise ToolError("%s: %r is not a number" % (where, v))
    if x <= 0:
        raise ToolError("%s: must be positive" % where)
    return x


def parse_number(v, where, lo, hi=None):
    """A number in [lo, hi]."""
    try:
        x = float(str(v).strip())
    except ValueError:
        raise ToolError("%s: %r is not a number" % (where, v))
    if x < lo or (hi is not None and x > hi):
        raise ToolError("%s: %g is outside [%g, %s]" % (where, x, lo, "%g" % hi if hi is not None
                                                        else "inf"))
    return x


# The machine's other load (load.py): [sweep] key: (Policy field, lowest, highest).
LOAD_KEYS = {"busy_threshold": ("busy_cpus", 0.0, None), "quiet_wait": ("quiet_wait", 0.0, None),
             "redo": ("redo_share", 0.0, 1.0), "extra_time": ("extra_time", 0.0, None)}


def load_policy(values, where, policy=load.DEFAULT):
    """`policy` with the LOAD_KEYS set in `values` ({key: text or number, None: unset});
    where(key) names the place in a message."""
    got = {}
    for key, (field, lo, hi) in LOAD_KEYS.items():
        if values.get(key) is not None:
            got[field] = parse_number(values[key], where(key), lo, hi)
    return policy._replace(**got)


# The settings of a run: [sweep] sets them (else the default here), a [workload] section
# may override them. key: (default, parse(text, where, ncores)).
RUN_SETTINGS = {
    "threads": ("1", lambda t, where, n: parse_threads(t, n, where)),
    "repetitions": ("1", lambda t, where, n: parse_int(t, where, 1)),
    "scale": ("1", lambda t, where, n: parse_positive(t, where)),
    "workload_seed": ("42", lambda t, where, n: parse_int(t, where, 0)),
    "timeout": ("300", lambda t, where, n: parse_positive(t, where)),
    "pin": ("off", lambda t, where, n: parse_bool(t, where)),
}
