"""A [program NAME] section of a sweep file: its keys, checked, and the placeholders of its
commands (the package's docstring, __init__.py, says what a program run is)."""
import os
import shlex

from ..common import REPO, parse_bool, parse_key_values, split_commas

# key: what it means (docs/tool.md has the same list; an unknown key names these).
KEYS = {
    "command": "the program: a /bin/sh -c command line run under the allocator (with server: "
               "the client, run under glibc)",
    "setup": "once per sweep before the first run, under glibc, in a fresh directory: makes "
             "the inputs (deterministically; nothing is downloaded)",
    "inputs": "files setup makes (relative to its directory): checked, sha256 in meta.json",
    "verify": "after the command, under glibc, in the same directory: its stdout is the "
              "output compared with glibc's",
    "output": "what is compared with glibc's output: stdout (default) or a file the command "
              "writes (relative to dir)",
    "dir": "working directory of command, verify and server, relative to the run's copy of "
           "the setup directory (default: that copy)",
    "needs": "executables that must be on PATH (checked before the first run)",
    "server": "a server run under the allocator, listening on 127.0.0.1:{port}",
    "stop": "stops the server (run under glibc); default: SIGTERM to the server",
    "preload_libc": "yes for a program linked with an allocator of its own (Debian's "
                    "redis-server: jemalloc): under glibc it runs with LD_PRELOAD=libc.so.6, so "
                    "that glibc's malloc is found first (default no)",
    "setup_timeout": "seconds setup may take (default 600)",
    "threads": "values of {threads} (default: the sweep's when a command uses {threads}, "
               "else 1)",
    "repetitions": "as in [sweep]",
    "timeout": "seconds per run (command, or server start to stop; verify has its own)",
    "workload_seed": "the value of {seed} in setup",
    "allocators": "a subset of the sweep's allocators",
    "knobs": "knob overrides for this program's hoardlab runs",
}
# placeholders replaced in commands (only these; other braces are left to the shell)
PLACEHOLDERS = {"threads": ("command", "verify", "server", "stop"),
                "repo": ("command", "verify", "server", "stop", "setup"),
                "port": ("command", "verify", "server", "stop"),
                "seed": ("setup",)}
# every program process sees these (HOME: nothing of the user's configuration is read)
FIXED_ENV = {"LC_ALL": "C", "TZ": "UTC"}
SETUP_TIMEOUT = 600
STOP_GRACE = 10.0           # seconds a server has to exit after stop
TAIL = 600
PRELOAD_IGNORED = "from LD_PRELOAD cannot be preloaded"


def is_program(row):
    return row.get("workload") == "program"


# --- the section ------------------------------------------------------------------------------

def section(sw, sec, w):
    """One [program LABEL] section of Sweep `sw`: a workload dict for Sweep.expand(), with
    the program's spec under "program"."""
    label = sec[len("program"):].strip()
    where = "[%s]" % sec
    if not label:
        raise sw.error("[program] needs a name: [program sqlite]")
    for k in w:
        if k not in KEYS:
            raise sw.error("%s unknown key %r (valid: %s)" % (where, k, ", ".join(sorted(KEYS))))
    if not w.get("command", "").strip():
        raise sw.error("%s missing key 'command': the program to run (valid keys: %s)"
                       % (where, ", ".join(sorted(KEYS))))
    if label in [x["label"] for x in sw.workloads]:
        raise sw.error("%s: %r is already the name of another section" % (where, label))
    for key in ("command", "verify", "server", "stop", "setup"):
        for ph, allowed in PLACEHOLDERS.items():
            if key in w and "{%s}" % ph in w[key] and key not in allowed:
                raise sw.error("%s %s: {%s} is not set there (it is in: %s)"
                               % (where, key, ph, ", ".join(allowed)))
    server = w.get("server", "").strip() or None
    if server and "{port}" not in server:
        raise sw.error("%s server: must listen on {port} (a free port on 127.0.0.1)" % where)
    if not server:
        for key in ("command", "verify", "stop"):
            if "{port}" in w.get(key, ""):
                raise sw.error("%s %s: {port} is only set with server" % (where, key))
        if "stop" in w:
            raise sw.error("%s stop: only with server" % where)
    if "verify" in w and "output" in w:
        raise sw.error("%s output and verify: choose one (verify's stdout is the output)"
                       % where)
    for key in ("dir", "output"):
        v = w.get(key, "").strip()
        if v and (os.path.isabs(v) or ".." in v.split("/")):
            raise sw.error("%s %s: %r must be a path inside the run directory" % (where, key, v))
    settings = sw.run_settings({k: w[k] for k in ("threads", "repetitions", "timeout",
                                               "workload_seed") if k in w},
                            where, inherited=sw.settings)
    uses_threads = any("{threads}" in w.get(k, "") for k in ("command", "server"))
    if not uses_threads:
        if "threads" in w and settings["threads"] != [1]:
            raise sw.error("%s threads: neither command nor server uses {threads}" % where)
        settings["threads"] = [1]
    try:
        setup_timeout = float(w.get("setup_timeout", SETUP_TIMEOUT))
        if setup_timeout <= 0:
            raise ValueError
    except ValueError:
        raise sw.error("%s setup_timeout: %r is not a positive number of seconds"
                       % (where, w["setup_timeout"]))
    preload_libc = parse_bool(w.get("preload_libc", "no"), "%s: %s preload_libc"
                              % (sw.path, where))
    spec = {"label": label, "command": w["command"].strip(),
            "setup": w.get("setup", "").strip() or None,
            "inputs": split_commas(w.get("inputs", "")),
            "verify": w.get("verify", "").strip() or None,
            "output": w.get("output", "").strip() or "stdout",
            "dir": w.get("dir", "").strip() or ".",
            "needs": [n for n in w.get("needs", "").replace(",", " ").split() if n],
            "server": server, "stop": w.get("stop", "").strip() or None,
            "setup_timeout": setup_timeout, "seed": settings["workload_seed"],
            "preload_libc": preload_libc}
    wl = {"label": label, "workload": "program", "program": spec, "params": {}, "section": sec}
    wl.update(settings)
    wl["knobs"] = parse_key_values(w.get("knobs", ""), where + " knobs")
    wl["allocators"] = sw.allocator_subset(w["allocators"], where) if "allocators" in w \
        else None
    return wl


def fill(cmd, threads=None, port=None, seed=None):
    """The command with its placeholders replaced; other braces are left alone."""
    for ph, v in (("threads", threads), ("port", port), ("seed", seed),
                  ("repo", shlex.quote(REPO))):
        if v is not None:
            cmd = cmd.replace("{%s}" % ph, str(v))
    return cmd
