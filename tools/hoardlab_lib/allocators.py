"""Allocator specs and the allocators they name, resolved here and only here (allocator_kind,
row_config, name_problem, selection_env), and the environment a run under one gets.

An allocator of a sweep is either a hoardlab strategy with knob overrides (run with
LD_PRELOAD=libhoardlab.so, HOARD_STRATEGY and HOARD_<KNOB>), a composed row with knob overrides
(a named configuration file configs/rows/NAME.ini, run with LD_PRELOAD=libhoardlab.so,
HOARD_CONFIG=that file and HOARD_<KNOB>), or a production allocator preloaded from its library:
a Debian package's, for mimalloc3 the one the PyPI wheel cmeel-mimalloc installs, for snmalloc
and tcmalloc-google (Google's TCMalloc) the one tools/install-deps builds (glibc = no preload).
"""
import configparser
import glob
import importlib.metadata as md
import os
import re
import sys

from .common import (REPO, ToolError, did_you_mean, knob_env_name, parse_key_values, require,
                     split_commas)

# Production allocators: the library file names. Debian's are found by path; mimalloc3
# (Debian 12 ships only mimalloc 2.0) in the files of the installed PyPI package.
PRODUCTION = {
    "glibc": None,
    "jemalloc": "libjemalloc.so.2",
    "mimalloc": "libmimalloc.so.2",
    "mimalloc3": "libmimalloc.so.3",
    "tcmalloc": "libtcmalloc_minimal.so.4",
    "snmalloc": "libsnmallocshim.so",
    "tcmalloc-google": "libtcmalloc-google.so",
    "scudo": "libclang_rt.scudo_standalone-x86_64.so",
}
DEBIAN_PACKAGES = {"jemalloc": "libjemalloc2", "mimalloc": "libmimalloc2.0",
                   "tcmalloc": "libtcmalloc-minimal4", "scudo": "libclang-rt-14-dev"}
# Scudo (LLVM's hardened allocator): Debian ships it in LLVM's folder for compiler-rt, not in
# the library path; its standalone build (not the sanitizer runtime's older scudo).
DEBIAN_DIRS = {"scudo": "/usr/lib/llvm-*/lib/clang/*/lib/linux/"}
PYPI_PACKAGES = {"mimalloc3": "cmeel-mimalloc"}
# Built from source by tools/install-deps (Debian 12 has no snmalloc): upstream's LD_PRELOAD
# shim, from the tree the crate snmalloc-sys vendors (its version is snmalloc's release), into
# the first folder as root, else the second. The version is pinned there too.
SNMALLOC_VERSION = "0.7.6"
SNMALLOC_DIRS = ["/usr/local/lib/hoardlab/snmalloc-" + SNMALLOC_VERSION,
                 os.path.join(os.environ.get("XDG_CACHE_HOME") or
                              os.path.join(os.path.expanduser("~"), ".cache"),
                              "hoardlab", "snmalloc-" + SNMALLOC_VERSION)]
# Google's TCMalloc (per-CPU caches on rseq, the huge-page-aware page heap), beside gperftools'
# `tcmalloc`: the sources the crate libtcmalloc-sys vendors, built by install-deps with the C
# library's entry points (the crate's own build has none); the crate's version is pinned.
TCMALLOC_GOOGLE_VERSION = "0.1.14"
TCMALLOC_GOOGLE_DIRS = ["/usr/local/lib/hoardlab/tcmalloc-google-" + TCMALLOC_GOOGLE_VERSION,
                        os.path.join(os.environ.get("XDG_CACHE_HOME") or
                                     os.path.join(os.path.expanduser("~"), ".cache"),
                                     "hoardlab", "tcmalloc-google-" + TCMALLOC_GOOGLE_VERSION)]
SOURCE_BUILT = {"snmalloc": ("snmalloc-sys (crates.io)", SNMALLOC_VERSION, SNMALLOC_DIRS),
                "tcmalloc-google": ("libtcmalloc-sys (crates.io)", TCMALLOC_GOOGLE_VERSION,
                                    TCMALLOC_GOOGLE_DIRS)}
# What a production allocator needs in its runs' environment beside LD_PRELOAD. Google's
# TCMalloc registers rseq for each thread itself, which fails (EBUSY) where glibc (2.35 and
# later; Debian 12's 2.36) has registered it first, and its per-CPU caches are then off:
# glibc's registration is turned off, as TCMalloc's users do (MongoDB's documentation).
PRODUCTION_ENV = {"tcmalloc-google": {"GLIBC_TUNABLES": "glibc.pthread.rseq=0"}}
# What `hoardlab cost` preloads under callgrind instead, beside the production library: snmalloc
# reserves a pagemap for 48 address bits (256 GiB), past valgrind's 64 GiB mapping limit, so
# install-deps builds it again with 38 bits (valgrind's clients stay below 128 GiB), which runs
# only under valgrind; only the pagemap's set-up differs between the two builds' code.
CALLGRIND_LIBRARY = {"snmalloc": "libsnmallocshim-callgrind.so"}
# Production allocators `hoardlab cost` cannot count, and why: left out of its runs (said so).
NOT_COUNTED = {"scudo": "Scudo stops under valgrind: its primary reserves 180 GiB at start (4 GiB "
                        "per size class, LLVM 14), past valgrind's address space "
                        "(docs/hardening.md)"}
# Composed rows: configs/rows/NAME.ini, each a valid HOARD_CONFIG file that sets the testbed's
# elements the way a production allocator assembles its own (docs/rows.md); its first line is a
# comment, the row's one-line account. The folder is the list: no name is written anywhere else.
ROWS_DIR = os.path.join(REPO, "configs", "rows")
ROW_NAME = re.compile(r"[a-z0-9][a-z0-9._+-]*$")
LIB_DIRS = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
            "/usr/lib", "/lib/x86_64-linux-gnu"]


def pypi_library(dist, fname):
    """Path of file `fname` installed by the PyPI distribution `dist` into the site-packages
    of the python running this tool (importlib.metadata, so wherever pip put it), or None."""
    try:
        files = md.distribution(dist).files or []
    except md.PackageNotFoundError:
        return None
    for f in files:
        if f.name == fname:
            p = os.path.abspath(str(f.locate()))
            if os.path.isfile(p):
                return p
    return None


def production_library(name):
    """Absolute path of a production allocator's library, None for glibc.
    Raises ToolError naming the package (and how to install it) when the library is
    missing."""
    fname = PRODUCTION[name]
    if fname is None:
        return None
    if name in SOURCE_BUILT:
        crate, version, dirs = SOURCE_BUILT[name]
        for d in dirs:
            if os.path.isfile(os.path.join(d, fname)):
                return os.path.join(d, fname)
        raise ToolError("%s: %s (%s %s) not found in %s; build it from the crate %s: "
                        "tools/install-deps" % (name, fname, name, version, " or ".join(dirs),
                                                crate.split()[0]))
    if name in PYPI_PACKAGES:
        dist = PYPI_PACKAGES[name]
        p = pypi_library(dist, fname)
        if p:
            return p
        raise ToolError("%s: %s not found; install the PyPI package %s: tools/install-deps, "
                        "or %s -m pip install %s" % (name, fname, dist, sys.executable, dist))
    for d in LIB_DIRS:
        p = os.path.join(d, fname)
        if os.path.exists(p):
            return p
    hits = glob.glob("/usr/lib/*/" + fname)
    if name in DEBIAN_DIRS:                             # the newest LLVM's first
        hits += sorted(glob.glob(DEBIAN_DIRS[name] + fname), reverse=True)
    if hits:
        return hits[0]
    pkg = DEBIAN_PACKAGES[name]
    raise ToolError("%s: %s not found; install the Debian package %s (tools/install-deps)"
                    % (name, fname, pkg))


def callgrind_library(name):
    """The library `hoardlab cost` preloads for production allocator `name` under callgrind:
    production_library's, or its CALLGRIND_LIBRARY build beside it."""
    lib = production_library(name)
    if name not in CALLGRIND_LIBRARY:
        return lib
    p = os.path.join(os.path.dirname(lib), CALLGRIND_LIBRARY[name])
    if not os.path.isfile(p):
        raise ToolError("%s: %s not found beside %s; build it: tools/install-deps"
                        % (name, CALLGRIND_LIBRARY[name], lib))
    return p


def parse_allocator_spec(spec):
    """The one allocator-with-knobs syntax of `run -a`, `cost -a`, `config -a` and sweeps:
    'hoard:heap_select=cpu:tlab=on' (the colon form, which fits in a comma-separated list),
    or 'concurrent, padding=on' (the comma form). -> ('hoard', {'heap_select': 'cpu', ...}).
    'preload:/path/lib.so' is a base of its own (its colon is part of the name)."""
    spec = (spec or "").strip()
    head, sep, rest = spec.partition(",")
    if head.startswith("preload:"):
        base, knobs = head, []
    else:
        base, *knobs = head.split(":")
    parts = [p.strip() for p in knobs] + split_commas(rest if sep else "")
    base = base.strip()
    if not base:
        raise ToolError("empty allocator spec %r" % spec)
    if "=" in base:
        raise ToolError("allocator spec %r must start with a strategy or allocator name, "
                        "e.g. hoard:%s" % (spec, base))
    return base, parse_key_values(parts, "allocator spec %r (STRATEGY:KEY=VALUE:...)" % spec)


def allocator_kind(base):
    """production, preload, or hoardlab (a strategy or a composed row: libhoardlab runs it, and
    knobs apply to it)."""
    if base in PRODUCTION:
        return "production"
    if base.startswith("preload:"):
        return "preload"
    return "hoardlab"


def composed_rows():
    """{name: (path, account)} of every composed row, by name: configs/rows/NAME.ini, whose
    first line is a comment giving its one-line account ('; per-thread heaps ...'). A file
    whose name cannot be an allocator's (upper case, a ':' or ',', a production allocator's
    name) or that opens without its account is a ToolError, so no row goes unlisted."""
    rows = {}
    for path in sorted(glob.glob(os.path.join(ROWS_DIR, "*.ini"))):
        name = os.path.basename(path)[:-len(".ini")]
        if not ROW_NAME.match(name) or name in PRODUCTION:
            raise ToolError("%s: %r cannot name a composed row (lower-case letters, digits and "
                            ". _ + -, not a production allocator's name)" % (path, name))
        with open(path) as f:
            first = f.readline().strip()
        if not first.startswith(";") or not first.lstrip("; ").strip():
            raise ToolError("%s:1: a composed row opens with its one-line account, a comment "
                            "('; what it assembles')" % path)
        rows[name] = (path, first.lstrip("; ").strip())
    return rows


def row_config(name):
    """The configuration file of composed row `name`, or None if it is not one."""
    row = composed_rows().get(name)
    return row[0] if row else None


def name_problem(base, strategies, production=True):
    """None if `base` names an allocator: one of `strategies` (the build's,
    hlconfig_strategies), a composed row, or (with `production`) a production allocator or
    preload:PATH; else the one-line message, with the closest name and every valid one. Every
    command that checks a name (run, sweep, attribute, heapmap, config) asks this."""
    rows = list(composed_rows())
    if base in strategies or base in rows or (production and allocator_kind(base) != "hoardlab"):
        return None
    known = list(strategies) + rows + (list(PRODUCTION) if production else [])
    return "unknown %s %r%s (strategies: %s; composed rows: %s%s)" % (
        "strategy or allocator" if production else "strategy", base, did_you_mean(base, known),
        ", ".join(strategies), ", ".join(rows) or "none",
        "; production: " + ", ".join(PRODUCTION) if production else "")


def expected_strategy(base, knobs=None):
    """The strategy a run of hoardlab allocator `base` reports (hlbench's record, HOARD_STATS):
    a `strategy` knob's, else a composed row's file's ([allocator] strategy), else `base`."""
    if knobs and knobs.get("strategy"):
        return knobs["strategy"]
    path = row_config(base)
    if not path:
        return base
    cp = configparser.ConfigParser(inline_comment_prefixes=(";", "#"))
    cp.read(path)
    return cp.get("allocator", "strategy", fallback=None) or "hoard"


def selection_env(base):
    """The variables that make libhoardlab run `base`, a strategy or a composed row:
    HOARD_STRATEGY=base, or HOARD_CONFIG=the row's file (which names its strategy)."""
    path = row_config(base)
    return {"HOARD_CONFIG": path} if path else {"HOARD_STRATEGY": base}


def allocator_env(base, knobs, bdir, environ=None):
    """Environment for running a program under allocator `base` with `knobs`.
    HOARD_* variables inherited from the caller are removed so nothing leaks into a run."""
    env = dict(os.environ if environ is None else environ)
    for k in list(env):
        if k.startswith("HOARD_") or k == "LD_PRELOAD":
            del env[k]
    kind = allocator_kind(base)
    if kind == "production":
        if knobs:
            raise ToolError("%s is a production allocator: knobs %s do not apply"
                            % (base, ", ".join(sorted(knobs))))
        lib = production_library(base)
        if lib:
            env["LD_PRELOAD"] = lib
        for k, v in PRODUCTION_ENV.get(base, {}).items():
            env[k] = env[k] + ":" + v if env.get(k) else v
    elif kind == "preload":
        env["LD_PRELOAD"] = os.path.abspath(base.split(":", 1)[1])
    else:
        env["LD_PRELOAD"] = require(bdir, "lib")
        env.update(selection_env(base))
        for k, v in knobs.items():
            env[knob_env_name(k)] = str(v)
    return env
