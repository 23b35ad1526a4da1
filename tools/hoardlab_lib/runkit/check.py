"""Everything a sweep (or `run`) names, checked before the first run, against the build:
strategies, knob names, knob values and where each knob acts (asked of the built hlconfig, so
config.h's table stays the only source), workload names and parameters (`hlbench --list`).

A mistake is one line: 'FILE:LINE: [SECTION] KEY: what is wrong; did you mean X?'."""
import json
import re
import subprocess

from ..common import ToolError, did_you_mean, knob_env_name, knob_key, require
from ..allocators import allocator_kind, name_problem, production_library, row_config

_cache = {}


def _output(argv):
    key = tuple(argv)
    if key not in _cache:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            raise ToolError("%s failed: %s" % (" ".join(argv), p.stderr.strip()[-300:]))
        _cache[key] = p.stdout
    return _cache[key]


def config_keys(bdir):
    """The knob names of the built table (hlconfig --json)."""
    return [k["name"] for k in json.loads(_output([require(bdir, "hlconfig"), "--json"]))]


def workloads(bdir):
    """{workload: set of its parameters} from `hlbench --list`, plus hlbench's common
    options a sweep may pass as parameters (`hlbench --help`), under the key None."""
    hlbench = require(bdir, "hlbench")
    table, name = {}, None
    for line in _output([hlbench, "--list"]).splitlines():
        if line and not line[0].isspace():
            name = line.split()[0]
            table[name] = set()
        elif name and line.strip().startswith("defaults:"):
            table[name] = {p.replace("-", "_") for p in re.findall(r"--([\w-]+)", line)}
    help_text = subprocess.run([hlbench, "--help"], capture_output=True, text=True,
                               timeout=60).stdout
    common = {p.replace("-", "_") for p in re.findall(r"^\s+--([\w-]+)", help_text, re.M)}
    table[None] = common - {"threads", "scale", "seed", "pin", "label"}   # sweep settings
    return table


def knob_problem(bdir, base, knobs):
    """None if hlconfig accepts strategy or composed row `base` with `knobs` at start-up,
    else (knob, message) with the message of the start-up check (value out of range, key
    acting nowhere, ...). A composed row is its file with the knobs as HOARD_<KEY> (which win),
    alone in the environment, as --check puts a strategy's, and read by --effective (which
    starts the configuration exactly as a preloaded program would)."""
    row = row_config(base)
    if row:
        argv, env = [require(bdir, "hlconfig"), "--effective"], {"HOARD_CONFIG": row}
        env.update((knob_env_name(k), str(v)) for k, v in knobs.items())
    else:
        argv = [require(bdir, "hlconfig"), "--check", "strategy=" + base]
        argv += ["%s=%s" % kv for kv in knobs.items()]
        env = None
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    if p.returncode == 0:
        return None
    msg = (p.stderr or p.stdout).strip().splitlines()
    msg = msg[-1] if msg else "hlconfig --check: exit %d" % p.returncode
    m = re.match(r"(?:hoardlab: )?environment: HOARD_(\w+): (.*)", msg)
    if m:
        return knob_key(m.group(1)), m.group(2)
    return None, msg


def allocator(bdir, base, knobs, strategies, where):
    """`run -a`: the allocator and its knobs, each mistake one line prefixed by `where`."""
    kind = allocator_kind(base)
    if kind == "production":
        production_library(base)
    if kind != "hoardlab":
        return
    bad = name_problem(base, strategies)
    if bad:
        raise ToolError("%s: %s" % (where, bad))
    keys = config_keys(bdir)
    for k in knobs:
        if k not in keys:
            raise ToolError("%s: unknown knob %r%s" % (where, k, did_you_mean(k, keys)))
    bad = knob_problem(bdir, base, knobs)
    if bad:
        raise ToolError("%s: under %s: %s" % (where, base, bad[1]))


def sweep(sw, runs, bdir, strategies):
    """Every run's allocator, knobs, workload and parameters; raises ToolError at the first
    mistake, located in the sweep file."""
    keys = config_keys(bdir)
    for label, base, knobs in sw.allocators:
        if allocator_kind(base) == "production":
            production_library(base)
        elif name_problem(base, strategies):
            raise sw.error_at("allocators", label, name_problem(base, strategies))
    for origin, knob in sw.knob_origins():
        if knob not in keys:
            raise sw.error_at(*origin, "unknown knob %r%s" % (knob, did_you_mean(knob, keys)))
    table = workloads(bdir)
    for wl in sw.workloads:
        if "program" in wl:
            continue
        sec = wl["section"]
        if wl["workload"] not in table:
            raise sw.error_at(sec, "workload" if wl["workload"] != wl["label"] else None,
                              "unknown workload %r%s" % (wl["workload"], did_you_mean(
                                  wl["workload"], [w for w in table if w])))
        known = table[wl["workload"]] | table[None]
        for p in wl["params"]:
            if p.replace("-", "_") not in known:
                raise sw.error_at(sec, p, "%s has no parameter %r%s (its parameters: %s)" % (
                    wl["workload"], p, did_you_mean(p.replace("-", "_"), known),
                    ", ".join(sorted(table[wl["workload"]]))))
    seen = set()
    for r in runs:
        if r["kind"] != "hoardlab":
            continue
        key = (r["base"], tuple(sorted(r["knobs"].items())))
        if key in seen:
            continue
        seen.add(key)
        bad = knob_problem(bdir, r["base"], r["knobs"])
        if bad:
            knob, msg = bad
            raise sw.error_at(*sw.knob_origin(r, knob),
                              "under %s (%s): %s" % (r["base"], r["variant"], msg))
