"""One run of a program under an allocator: its environment, the command (or a server and
its client), the check of its output against the reference, its result."""
import os
import signal
import time

from ..common import ToolError, require, sha256_file
from ..allocators import LIB_DIRS, allocator_env, allocator_kind, expected_strategy
from .proc import (Proc, aggregate_stats, exit_text, first_difference, free_port, listening,
                   read_stats)
from .spec import FIXED_ENV, PRELOAD_IGNORED, STOP_GRACE, TAIL, fill


# --- a run ----------------------------------------------------------------------------------

def program_env(base, knobs, bdir, home, stats=None):
    env = allocator_env(base, knobs, bdir)
    env.update(FIXED_ENV, HOME=home)
    if stats:
        env["HOARD_STATS"] = stats
    return env


def libc_path():
    """The C library's file, for preload_libc."""
    for d in LIB_DIRS:
        p = os.path.join(d, "libc.so.6")
        if os.path.exists(p):
            return p
    raise ToolError("preload_libc: libc.so.6 not found in %s" % ", ".join(LIB_DIRS))


def _new_result(env):
    return {"argv": [], "started_at": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
            "records": [], "exit_code": None, "error": "", "status": "ok",
            "env": {k: v for k, v in env.items() if k.startswith("HOARD_") or
                    k == "LD_PRELOAD"}}


def _fail(res, status, msg, stderr=""):
    res["status"] = status
    res["error"] = (msg + (": " + stderr.strip()[-TAIL:] if stderr.strip() else ""))[-TAIL:]
    return res


def execute(spec, base, knobs, threads, bdir, scratch, work, timeout, reference=None):
    """One run of program `spec` under allocator `base` in directory `work` (a copy of the
    setup directory); scratch holds its stdout, stderr and statistics. reference: the glibc
    output's {"path", "sha256", "bytes"}, or None for the reference run itself. Returns
    (result in runkit.run_one's form, path of the output compared or None)."""
    cwd = os.path.join(work, spec["dir"])
    hlrun = require(bdir, "hlrun")
    stats = os.path.join(scratch, "stats.jsonl") if allocator_kind(base) == "hoardlab" \
        else None
    env = program_env(base, knobs, bdir, work, stats)
    if spec["preload_libc"] and not env.get("LD_PRELOAD"):
        env["LD_PRELOAD"] = libc_path()
    plain = program_env("glibc", {}, bdir, work)
    res = _new_result(env)
    deadline = time.perf_counter() + timeout
    port = free_port() if spec["server"] else None
    sub = dict(threads=threads, port=port)
    info = {}
    if spec["server"]:
        main = _serve(spec, sub, cwd, env, plain, scratch, deadline, res, info, hlrun)
    else:
        res["argv"] = ["/bin/sh", "-c", fill(spec["command"], **sub)]
        main = Proc(res["argv"][2], cwd, env, os.path.join(scratch, "stdout"),
                    os.path.join(scratch, "stderr"), hlrun, sample=True).wait(deadline)
        info["wall_s"] = main.wall
        if main.timed_out:
            _fail(res, "timeout", "timed out after %gs" % timeout, main.stderr_text())
    if res["status"] != "ok":
        return res, None
    res["exit_code"] = main.code
    err = main.stderr_text()
    if env.get("LD_PRELOAD") and PRELOAD_IGNORED in err:
        line = next(ln for ln in err.splitlines() if PRELOAD_IGNORED in ln)
        return _fail(res, "not-loaded", "the allocator was not loaded: " + line.strip()), None
    if main.code != 0:
        return _fail(res, "failed", exit_text(main.code), err), None
    if "server_error" in info:
        return _fail(res, "failed", info["server_error"]), None
    # the output compared
    if spec["verify"]:
        v = info["verify"] if spec["server"] else \
            Proc(fill(spec["verify"], **sub), cwd, plain, os.path.join(scratch, "verify.out"),
                 os.path.join(scratch, "verify.err"), hlrun).wait(time.perf_counter() + timeout)
        if v.timed_out or v.code != 0:
            what = "timed out after %gs" % timeout if v.timed_out else exit_text(v.code)
            return _fail(res, "mismatch", "verify command %s" % what, v.stderr_text()), None
        out, what = v.out, "verify's stdout"
    elif spec["output"] == "stdout":
        out, what = main.out, "stdout"
    else:
        out, what = os.path.join(cwd, spec["output"]), spec["output"]
        if not os.path.isfile(out):
            return _fail(res, "mismatch", "output file %s missing" % spec["output"]), None
    digest, size = sha256_file(out), os.path.getsize(out)
    prog = {"user_s": round(main.utime, 4), "sys_s": round(main.stime, 4),
            "output_sha256": digest, "output_bytes": size}
    if spec["server"]:
        prog.update(server_s=round(main.wall, 4), port=port)
    rec = {"schema": None, "strategy": None, "wall_s": round(info["wall_s"], 4),
           "peak_rss_kb": main.maxrss_kb, "hoardlab": None, "program": prog}
    if main.series():
        rec["series"] = main.series()
    if stats:
        recs = read_stats(stats)
        prog["processes"] = len(recs)
        found = sorted({str(r.get("strategy")) for r in recs})
        if not recs:
            return _fail(res, "not-loaded", "no HOARD_STATS record: libhoardlab.so was not "
                         "loaded in any process that exited normally"), None
        expected = expected_strategy(base, knobs)     # a composed row's: its file's
        if found != [expected]:
            return _fail(res, "not-loaded", "HOARD_STATS records name strategy %s, expected "
                         "%s" % (", ".join(found), expected)), None
        rec["strategy"] = expected
        rec["hoardlab"] = aggregate_stats(recs, bdir)
    res["records"] = [rec]
    if reference is not None and digest != reference["sha256"]:
        _fail(res, "mismatch", "%s differs from glibc's (%d bytes, glibc %d; %s)"
              % (what, size, reference["bytes"], first_difference(out, reference["path"])))
    return res, out


def _serve(spec, sub, cwd, env, plain, scratch, deadline, res, info, hlrun):
    """Server mode: start the server under the allocator, wait until it listens, run the
    client and verify under glibc, stop the server and wait for it. Returns the server's
    Proc; res carries a timeout, info["server_error"] any other failure, info["verify"] the
    verify Proc."""
    port = sub["port"]
    cmd = fill(spec["server"], **sub)
    res["argv"] = ["/bin/sh", "-c", cmd]
    srv = Proc(cmd, cwd, env, os.path.join(scratch, "server.out"),
               os.path.join(scratch, "stderr"), hlrun, sample=True)
    try:
        while not listening(port):
            if srv.exited():
                info["server_error"] = "the server exited before listening on 127.0.0.1:%d" \
                    % port
                return srv.wait(deadline)
            if time.perf_counter() > deadline:
                _fail(res, "timeout", "the server did not listen on 127.0.0.1:%d within the "
                      "timeout" % port, srv.stderr_text())
                return srv.wait(deadline)
            time.sleep(0.01)
        client = Proc(fill(spec["command"], **sub), cwd, plain, os.path.join(scratch, "stdout"),
                      os.path.join(scratch, "client.err"), hlrun).wait(deadline)
        info["wall_s"] = client.wall
        if client.timed_out:
            _fail(res, "timeout", "the client timed out", client.stderr_text())
            return srv.wait(0)
        if client.code != 0:
            info["server_error"] = "the client failed (%s): %s" % (
                exit_text(client.code), client.stderr_text().strip()[-TAIL:])
        elif spec["verify"]:
            info["verify"] = Proc(fill(spec["verify"], **sub), cwd, plain,
                                  os.path.join(scratch, "verify.out"),
                                  os.path.join(scratch, "verify.err"), hlrun).wait(deadline)
        if spec["stop"]:
            Proc(fill(spec["stop"], **sub), cwd, plain, os.path.join(scratch, "stop.out"),
                 os.path.join(scratch, "stop.err"), hlrun).wait(time.perf_counter() + STOP_GRACE)
        else:
            srv.signal(signal.SIGTERM)
        srv.wait(time.perf_counter() + STOP_GRACE)
        if srv.timed_out:
            info["server_error"] = "the server did not exit within %gs of being stopped" \
                % STOP_GRACE
        elif srv.code == -signal.SIGTERM and not spec["stop"]:
            srv.code = 0        # it did what SIGTERM asks, without an exit of its own
        return srv
    finally:
        if srv.code is None:
            srv.wait(0)
