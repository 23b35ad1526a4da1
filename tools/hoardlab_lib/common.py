"""Paths, the build directory, allocator specs, and the parsers of key=value lists and
on/off values that specs, sweep files and the command line share.

An allocator of a sweep is either a hoardlab strategy with knob overrides (run with
LD_PRELOAD=libhoardlab.so, HOARD_STRATEGY and HOARD_<KNOB>), a composed row with knob overrides
(a named configuration file configs/rows/NAME.ini, run with LD_PRELOAD=libhoardlab.so,
HOARD_CONFIG=that file and HOARD_<KNOB>), or a production allocator preloaded from its library:
a Debian package's, for mimalloc3 the one the PyPI wheel cmeel-mimalloc installs, for snmalloc
and tcmalloc-google (Google's TCMalloc) the one tools/install-deps builds (glibc = no preload).
The names are resolved here and only here: allocator_kind, row_config, name_problem,
selection_env.
"""
import configparser
import difflib
import glob
import re
import hashlib
import importlib.metadata as md
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

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


class ToolError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


def build_dir(explicit=None):
    d = explicit or os.environ.get("HOARDLAB_BUILD_DIR") or os.path.join(REPO, "build")
    return os.path.abspath(d)


def artifact(bdir, which):
    rel = {"lib": "src/libhoardlab.so", "hlconfig": "src/hlconfig",
           "hlbench": "harness/hlbench", "hlrun": "harness/hlrun"}[which]
    return os.path.join(bdir, rel)


def require(bdir, which):
    p = artifact(bdir, which)
    if not os.path.exists(p):
        raise ToolError("%s not found at %s: run `tools/hoardlab build` first "
                        "(or point --build-dir / HOARDLAB_BUILD_DIR at a build)" % (which, p))
    return p


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


def log(msg):
    """A line on stderr (progress, warnings): stdout is kept for what a command prints."""
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def knob_env_name(key):
    return "HOARD_" + key.upper().replace("-", "_")


def knob_key(key):
    """A knob's name as the tool keys it: ' Empty-Fraction' -> 'empty_fraction'."""
    return key.strip().lower().replace("-", "_")


def split_commas(text):
    """'a, b,, c' -> ['a', 'b', 'c']."""
    return [p.strip() for p in (text or "").split(",") if p.strip()]


BOOL_TRUE = {"on", "1", "true", "yes"}
BOOL_FALSE = {"off", "0", "false", "no"}


def parse_bool(text, where):
    t = str(text).strip().lower()
    if t in BOOL_TRUE:
        return True
    if t in BOOL_FALSE:
        return False
    raise ToolError("%s: %r is not on/off (or yes/no, true/false, 1/0)" % (where, text))


def parse_key_values(items, where, knobs=True, form="key=value"):
    """The one key=value parser (allocator specs, a sweep's `knobs =`, --knob, --param):
    `items` is a comma-separated string or a list of 'key=value' strings; returns a dict in
    their order, keyed by knob_key(key) (by the key as written if knobs=False). A part
    without '=' raises ToolError '<where>: <part> is not key=value' (or `form`)."""
    if isinstance(items, str):
        items = split_commas(items)
    res = {}
    for item in items:
        if "=" not in item:
            raise ToolError("%s: %r is not %s" % (where, item, form))
        k, v = item.split("=", 1)
        res[knob_key(k) if knobs else k.strip()] = v.strip()
    return res


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


def did_you_mean(word, known):
    """'; did you mean X?' for the closest of `known`, or ''."""
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return "; did you mean %r?" % close[0] if close else ""


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


def hlconfig_strategies(bdir):
    """[(name, summary)] from `hlconfig --strategies`."""
    out = subprocess.run([require(bdir, "hlconfig"), "--strategies"], capture_output=True,
                         text=True, timeout=30)
    if out.returncode != 0:
        raise ToolError("hlconfig --strategies failed: %s" % out.stderr.strip()[-300:])
    res = []
    for line in out.stdout.splitlines():
        if not line.strip():
            continue
        name, _, summary = line.partition("\t")
        res.append((name.strip(), summary.strip()))
    return res


def cores():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def sha256_file(path):
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_json_lines(path):
    """The JSON objects of a file written one a line, in order; a line that is not a whole
    object (a writer killed mid-line) is skipped, and a missing or unreadable file is []."""
    objs = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                if isinstance(obj, dict):
                    objs.append(obj)
    except OSError:
        pass
    return objs


_STATS = {}


def hlconfig_stats(bdir=None):
    """Every statistic of the build, in the order of struct hoardlab_stats: [{name, from,
    across, help}] from `hlconfig --stats --json`, whose source is HOARDLAB_STATS in
    include/hoardlab.h (declared once there). `from`: thread (a per-thread counter summed over
    threads) or total; `across`: sum, largest or max (how a program's processes combine)."""
    bdir = build_dir(bdir)
    if bdir not in _STATS:
        exe = artifact(bdir, "hlconfig")
        if not os.path.exists(exe):
            raise ToolError("the statistics' names are read from the build (hlconfig --stats), "
                            "and hlconfig is not at %s: run `tools/hoardlab build` first (or "
                            "point --build-dir / HOARDLAB_BUILD_DIR at a build)" % exe)
        out = subprocess.run([exe, "--stats", "--json"], capture_output=True, text=True,
                             timeout=30)
        try:
            if out.returncode != 0:
                raise ValueError(out.stderr.strip()[-300:] or "exit %d" % out.returncode)
            stats = json.loads(out.stdout)
        except ValueError as e:
            raise ToolError("hlconfig --stats --json failed (%s): rebuild with "
                            "`tools/hoardlab build`" % e)
        _STATS[bdir] = stats
    return _STATS[bdir]


def stat_names(bdir=None, across=None):
    """The statistics' names in struct order, those combined `across` processes so if given."""
    return [s["name"] for s in hlconfig_stats(bdir) if across in (None, s["across"])]
