"""meta.json: everything needed to interpret and repeat a sweep — machine and topology
(hwloc), cpu model, kernel, compiler, commit, the sweep file and every configuration."""
import hashlib
import importlib.metadata as md
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time

from ..common import REPO, artifact, ToolError, cores
from ..allocators import PRODUCTION, PYPI_PACKAGES, SOURCE_BUILT, allocator_env, production_library


def _run(argv, env=None, timeout=30):
    try:
        p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout,
                           errors="replace")
        return p.returncode, p.stdout, p.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, "", str(e)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def topology():
    """hwloc's view: object counts and the console tree (no I/O devices)."""
    topo = {}
    for obj in ("package", "numanode", "core", "pu", "l3cache", "l2cache", "l1cache"):
        rc, out, _ = _run(["hwloc-calc", "--number-of", obj, "all"])
        if rc == 0 and out.strip().isdigit():
            topo[obj] = int(out.strip())
    tool = shutil.which("lstopo-no-graphics") or shutil.which("hwloc-ls")
    if tool:
        rc, out, _ = _run([tool, "--of", "console", "--no-io"])
        if rc == 0:
            topo["lstopo"] = out.strip().splitlines()
    if not topo:
        topo["error"] = "hwloc tools not found (install hwloc)"
    return topo


def git_info():
    """The commit, and whether the tree had uncommitted changes to tracked files (`dirty`):
    which files (`changed`, at most 50) and a hash of `git diff HEAD` (`diff_sha1`), so two
    sweeps of the same commit tell whether they measured the same edits."""
    info = {}
    if shutil.which("git"):
        rc, out, _ = _run(["git", "-C", REPO, "rev-parse", "HEAD"])
        info["commit"] = out.strip() if rc == 0 else None
        rc, out, _ = _run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"])
        info["dirty"] = bool(out.strip()) if rc == 0 else None
        if info["dirty"]:
            changed = [ln[3:] for ln in out.splitlines() if len(ln) > 3]
            info["changed"] = changed[:50]
            if len(changed) > 50:
                info["changed_more"] = len(changed) - 50
            try:
                d = subprocess.run(["git", "-C", REPO, "diff", "HEAD", "--no-ext-diff",
                                    "--no-color"], capture_output=True, timeout=30)
                if d.returncode == 0:
                    info["diff_sha1"] = hashlib.sha1(d.stdout).hexdigest()
            except (OSError, subprocess.TimeoutExpired):
                pass
    return info


def compiler(bdir):
    res = {}
    p = os.path.join(bdir, "meson-info", "intro-compilers.json")
    try:
        with open(p) as f:
            c = json.load(f).get("host", {}).get("c", {})
        res = {"id": c.get("id"), "version": c.get("full_version") or c.get("version"),
               "exelist": c.get("exelist")}
    except (OSError, ValueError):
        rc, out, _ = _run(["cc", "--version"])
        if rc == 0:
            res = {"version": out.splitlines()[0]}
    p = os.path.join(bdir, "meson-info", "intro-buildoptions.json")
    try:
        with open(p) as f:
            opts = json.load(f)
        res["build_options"] = {o["name"]: o["value"] for o in opts
                                if o.get("section") in ("user", "core", "base") and
                                o["name"] in ("buildtype", "optimization", "debug", "b_ndebug",
                                              "b_sanitize", "stats", "checks", "faults", "tests")}
    except (OSError, ValueError, KeyError):
        pass
    return res


def production_versions():
    res = {}
    for name in PRODUCTION:
        if PRODUCTION[name] is None:
            rc, out, _ = _run(["ldd", "--version"])
            res[name] = {"library": None,
                         "version": out.splitlines()[0] if rc == 0 and out else None}
            continue
        try:
            lib = production_library(name)
        except ToolError as e:
            res[name] = {"library": None, "missing": str(e)}
            continue
        entry = {"library": lib}
        if name in SOURCE_BUILT:
            res[name] = dict(entry, package=SOURCE_BUILT[name][0], version=SOURCE_BUILT[name][1])
            continue
        if name in PYPI_PACKAGES:
            try:
                entry.update(package="%s (PyPI)" % PYPI_PACKAGES[name],
                             version=md.version(PYPI_PACKAGES[name]))
            except md.PackageNotFoundError:
                pass
            res[name] = entry
            continue
        rc, out, _ = _run(["dpkg-query", "-S", os.path.realpath(lib)])
        if rc == 0 and ":" in out:
            pkg = out.split(":")[0].strip()
            rc, ver, _ = _run(["dpkg-query", "-W", "-f", "${Version}", pkg])
            entry.update(package=pkg, version=ver.strip() if rc == 0 else None)
        res[name] = entry
    return res


def hlconfig_table(bdir):
    rc, out, err = _run([artifact(bdir, "hlconfig"), "--json"])
    if rc != 0:
        return {"error": (err or "hlconfig not available").strip()[-300:]}
    try:
        return json.loads(out)
    except ValueError:
        return {"error": "hlconfig --json printed no JSON"}


def effective_config(bdir, base, knobs):
    """`hlconfig --effective` under the allocator's environment: every value and its source."""
    try:
        env = allocator_env(base, knobs, bdir)
    except ToolError as e:
        return {"error": str(e)}
    env.pop("LD_PRELOAD", None)     # hlconfig links the core itself
    rc, out, err = _run([artifact(bdir, "hlconfig"), "--effective"], env=env)
    if rc != 0:
        return {"error": (err or out).strip()[-300:], "exit_code": rc}
    return {"text": out.rstrip().splitlines()}


def machine():
    """This machine: what meta.json records under `machine` (and, for a sweep on Slurm, per
    node)."""
    return {"hostname": platform.node(), "cpu_model": cpu_model(), "cores": cores(),
            "cpu_count": os.cpu_count(), "kernel": platform.release(),
            "kernel_version": platform.version(), "arch": platform.machine(),
            "os": _os_release(), "topology": topology(), "loadavg_start": loadavg(),
            "thp": thp_mode()}


def thp_mode():
    """The kernel's transparent huge page mode (always, madvise, never: the bracketed word of
    /sys/kernel/mm/transparent_hugepage/enabled), or None where the file is missing."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            text = f.read()
    except OSError:
        return None
    m = re.search(r"\[(\w+)\]", text)
    return m.group(1) if m else None


def collect(bdir, sweep=None, extra=None):
    m = {
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "tool": "tools/hoardlab",
        "argv": sys.argv,
        "machine": machine(),
        "compiler": compiler(bdir),
        "git": git_info(),
        "python": sys.version.split()[0],
        "build_dir": bdir,
        "production_allocators": production_versions(),
        "config_table": hlconfig_table(bdir),
    }
    try:
        import matplotlib       # deferred: slow, and optional (the version, if installed)
        m["matplotlib"] = matplotlib.__version__
    except ImportError:
        m["matplotlib"] = None
    if sweep is not None:
        m["sweep"] = {"path": os.path.abspath(sweep.path), "name": sweep.name,
                      "description": sweep.description, "text": sweep.text,
                      "baseline": sweep.baseline, "ncores": sweep.ncores}
        m["allocators"] = []
        for label, base, knobs, swept, variant in sweep.variants():
            entry = {"allocator": label, "variant": variant, "base": base, "knobs": knobs}
            if base not in PRODUCTION and not base.startswith("preload:"):
                entry["effective"] = effective_config(bdir, base, knobs)
            m["allocators"].append(entry)
    if extra:
        m.update(extra)
    return m


def loadavg():
    """1-, 5- and 15-minute load averages: other work on the machine skews timings."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _os_release():
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return None


def write(path, meta):
    with open(path, "w") as f:
        json.dump(meta, f, indent=2, sort_keys=False, default=str)
        f.write("\n")


def read(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}
