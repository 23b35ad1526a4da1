"""Paths, the build directory, and allocator specs.

An allocator of a sweep is either a hoardlab strategy with knob overrides (run with
LD_PRELOAD=libhoardlab.so, HOARD_STRATEGY and HOARD_<KNOB>) or a production allocator
preloaded from its library: a Debian package's, or for mimalloc3 the one the PyPI wheel
cmeel-mimalloc installs (glibc = no preload).
"""
import glob
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
}
DEBIAN_PACKAGES = {"jemalloc": "libjemalloc2", "mimalloc": "libmimalloc2.0",
                   "tcmalloc": "libtcmalloc-minimal4"}
PYPI_PACKAGES = {"mimalloc3": "cmeel-mimalloc"}
LIB_DIRS = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
            "/usr/lib", "/lib/x86_64-linux-gnu"]


class ToolError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


def build_dir(explicit=None):
    d = explicit or os.environ.get("HOARDLAB_BUILD_DIR") or os.path.join(REPO, "build")
    return os.path.abspath(d)


def artifact(bdir, which):
    rel = {"lib": "src/libhoardlab.so", "hlconfig": "src/hlconfig",
           "hlbench": "harness/hlbench"}[which]
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
    import importlib.metadata as md
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
    if hits:
        return hits[0]
    pkg = DEBIAN_PACKAGES[name]
    raise ToolError("%s: %s not found; install the Debian package %s (tools/install-deps)"
                    % (name, fname, pkg))


def knob_env_name(key):
    return "HOARD_" + key.upper().replace("-", "_")


def parse_allocator_spec(spec):
    """'concurrent, padding=on' -> ('concurrent', {'padding': 'on'})."""
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    if not parts:
        raise ToolError("empty allocator spec")
    base, knobs = parts[0], {}
    if "=" in base:
        raise ToolError("allocator spec %r must start with a strategy or allocator name" % spec)
    for p in parts[1:]:
        if "=" not in p:
            raise ToolError("allocator spec %r: %r is not key=value" % (spec, p))
        k, v = p.split("=", 1)
        knobs[k.strip().lower().replace("-", "_")] = v.strip()
    return base, knobs


def allocator_kind(base):
    if base in PRODUCTION:
        return "production"
    if base.startswith("preload:"):
        return "preload"
    return "hoardlab"


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
    elif kind == "preload":
        env["LD_PRELOAD"] = os.path.abspath(base.split(":", 1)[1])
    else:
        env["LD_PRELOAD"] = require(bdir, "lib")
        env["HOARD_STRATEGY"] = base
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
