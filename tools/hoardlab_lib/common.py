"""Paths, the build directory and its artifacts, the user-facing error (ToolError) and log,
the parsers of key=value lists and on/off values that allocator specs, sweep files and the
command line share, the build's strategies and statistics (hlconfig), and small file helpers.
Allocator specs and the allocators they name are allocators.py's.
"""
import difflib
import hashlib
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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


def did_you_mean(word, known):
    """'; did you mean X?' for the closest of `known`, or ''."""
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return "; did you mean %r?" % close[0] if close else ""


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
