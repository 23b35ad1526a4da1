"""Building hoardlab and installing what it needs, for every command that builds first
(`build`, `test`, `main`, and `sweep`, `run`, `cost`, `layers` before they look at the
binaries). Imported by cli and selftest; it imports only common."""
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import time

from .common import REPO, ToolError, log


# --- the strategies of meson_options.txt and of a configured build ------------------------------

OPTIONS = os.path.join(REPO, "meson_options.txt")
STRATEGIES_OPTION = re.compile(r"option\('strategies',.*?value\s*:\s*(\[[^\]]*\])", re.S)


def listed_strategies(path=OPTIONS):
    """The strategies meson_options.txt lists (the one list; a new one is added there)."""
    with open(path) as f:
        m = STRATEGIES_OPTION.search(f.read())
    if not m:
        raise ToolError("%s: no option('strategies', ... value : [...])" % path)
    return ast.literal_eval(m.group(1))


def built_strategies(bdir):
    """The strategies `bdir` was configured with (meson keeps that value when
    meson_options.txt changes), or None when it is not configured."""
    path = os.path.join(bdir, "meson-info", "intro-buildoptions.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return next((o["value"] for o in json.load(f) if o["name"] == "strategies"), None)


def strategies_set_by_hand(bdir):
    """Whether the build's strategies were given on a meson command line (-Dstrategies=...),
    which meson records in meson-private/cmd_line.txt; a build on the default has none."""
    path = os.path.join(bdir, "meson-private", "cmd_line.txt")
    if not os.path.exists(path):
        return False
    with open(path) as f:
        return any(ln.split("=")[0].strip() == "strategies" for ln in f)


def reconfigure_line(bdir, names):
    return "meson configure %s -Dstrategies=%s" % (os.path.relpath(bdir, REPO), ",".join(names))


def sync_strategies(bdir):
    """A build configured with every strategy meson_options.txt listed then follows the file:
    when it names strategies the build lacks (added since, by hand or `hoardlab new`) or lacks
    ones the build has, `meson configure -Dstrategies=...`. Such a build is one on the default
    (no -Dstrategies on its command line; meson keeps the value it was configured with when
    the file changes), or one whose missing strategies' files are newer than its
    configuration. A build configured with fewer on purpose (-Dstrategies=serial,hoard) is left
    as it is, with the one line that would add them. Returns whether it reconfigured."""
    built = built_strategies(bdir)
    if built is None:
        return False
    listed = listed_strategies()
    added = [s for s in listed if s not in built]
    gone = [s for s in built if s not in listed]
    if not added and not gone:
        return False
    src = os.path.join(REPO, "src", "strategies")
    stamp = os.path.getmtime(os.path.join(bdir, "meson-info", "intro-buildoptions.json"))
    new = not strategies_set_by_hand(bdir) or all(
        os.path.getmtime(os.path.join(src, s + ".c")) > stamp
        for s in added if os.path.exists(os.path.join(src, s + ".c")))
    if not new and not gone:
        log("build: %s compiles %s; meson_options.txt also lists %s. To build them: %s"
            % (bdir, ",".join(built), ",".join(added), reconfigure_line(bdir, listed)))
        return False
    log("build: meson_options.txt lists %s, %s was configured with %s: %s"
        % (",".join(listed), bdir, ",".join(built), reconfigure_line(bdir, listed)))
    p = subprocess.run(["meson", "configure", bdir, "-Dstrategies=" + ",".join(listed)],
                       cwd=REPO, stdout=subprocess.DEVNULL)
    if p.returncode != 0:
        raise ToolError("%s failed (exit %d)" % (reconfigure_line(bdir, listed), p.returncode))
    return True


# --- building --------------------------------------------------------------------------------

def do_build(bdir, jobs=None, quiet=False, targets=()):
    configured = os.path.exists(os.path.join(bdir, "build.ninja"))
    out = None if not quiet else subprocess.DEVNULL
    if not configured:
        log("meson setup %s" % bdir)
        p = subprocess.run(["meson", "setup", bdir, REPO], cwd=REPO, stdout=out)
        if p.returncode != 0:
            raise ToolError("meson setup %s failed (exit %d)" % (bdir, p.returncode))
    else:
        sync_strategies(bdir)
    argv = ["ninja", "-C", bdir] + (["-j", str(jobs)] if jobs else []) + list(targets)
    log(" ".join(argv))
    p = subprocess.run(argv, cwd=REPO, stdout=out)
    if p.returncode != 0:
        raise ToolError("build failed: %s (exit %d)" % (" ".join(argv), p.returncode))


# What a sweep, `run` and `cost` measure: built (incrementally) before they run, so they
# measure the source as it is now. hlcost only for cost tables (a sweep with cost = yes), hlrun
# only for real programs ([program] sections).
MEASURED_TARGETS = ("src/libhoardlab.so", "src/hlconfig", "harness/hlbench", "harness/hlcost",
                    "harness/hlrun")
STEP = re.compile(r"^\[\d+/\d+\] (.*)$")
LINKED = re.compile(r"^Linking target (\S+)")      # programs and shared libraries


def _tail(text, n=15):
    return "\n".join(text.rstrip().splitlines()[-n:])


def incremental_build(bdir, targets=MEASURED_TARGETS, jobs=None):
    """Bring the measured binaries up to date with the source before a measurement: `meson
    setup` if `bdir` is not configured yet, then ninja for `targets` (ninja does nothing
    when nothing changed). Silent when nothing was out of date; otherwise says so on stderr.
    A failed build raises ToolError with the compiler's last lines, so a run never measures
    a binary older than the source without a word. Returns what meta.json records."""
    t0 = time.time()
    info = {"ran": True, "configured": False, "steps": 0, "rebuilt": []}
    for prog, pkg in (("meson", "meson"), ("ninja", "ninja-build")):
        if not shutil.which(prog):
            raise ToolError("%s not found, needed to build before measuring (Debian package "
                            "%s; run tools/install-deps), or pass --no-build" % (prog, pkg))
    if not os.path.exists(os.path.join(bdir, "build.ninja")):
        log("build: %s is not configured yet: meson setup, then ninja" % bdir)
        p = subprocess.run(["meson", "setup", bdir, REPO], cwd=REPO, capture_output=True,
                           text=True, errors="replace")
        if p.returncode != 0:
            raise ToolError("meson setup %s failed (exit %d):\n%s"
                            % (bdir, p.returncode, _tail(p.stdout + p.stderr)))
        info["configured"] = True
    else:
        info["configured"] = sync_strategies(bdir)
    argv = ["ninja", "-C", bdir] + (["-j", str(jobs)] if jobs else []) + list(targets)
    p = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, errors="replace")
    out = []
    for line in p.stdout:
        out.append(line)
        m = STEP.match(line)
        if not m:
            continue
        if not info["steps"] and not info["configured"]:
            log("build: the source changed since the last build: %s" % " ".join(argv))
        info["steps"] += 1
        lk = LINKED.match(m.group(1))
        if lk:
            info["rebuilt"].append(lk.group(1))
    p.wait()
    info["seconds"] = round(time.time() - t0, 1)
    if p.returncode != 0:
        raise ToolError("build failed: %s (exit %d); nothing was measured:\n%s"
                        % (" ".join(argv), p.returncode, _tail("".join(out))))
    if info["steps"]:
        log("build: rebuilt %s (%d steps, %.1f s)" % (", ".join(info["rebuilt"]) or
                                                     "object files", info["steps"],
                                                     info["seconds"]))
    return info


def build_state(bdir, targets=MEASURED_TARGETS):
    """--no-build: record whether the binaries were out of date with the source (`ninja -n`,
    which runs nothing), and warn when they were."""
    info = {"ran": False, "stale": None}
    if os.path.exists(os.path.join(bdir, "build.ninja")) and shutil.which("ninja"):
        p = subprocess.run(["ninja", "-n", "-C", bdir] + list(targets), cwd=REPO,
                           capture_output=True, text=True, errors="replace")
        if p.returncode == 0:
            info["stale"] = any(STEP.match(ln) for ln in p.stdout.splitlines())
    if info["stale"]:
        log("build: --no-build, and %s is older than the source: measuring the old binaries"
            % bdir)
    return info


def install_deps():
    script = os.path.join(REPO, "tools", "install-deps")
    env = dict(os.environ, PYTHON=sys.executable)
    p = subprocess.run(["bash", script], env=env)
    return p.returncode
