"""A real single-node Slurm on this machine, for tests/tools/test_slurm.py and for trying
`tools/hoardlab sweep --slurm` by hand: munged, slurmctld and slurmd from Debian's packages
(tools/packages/slurm.txt), each in the foreground (munged -F, slurmctld -D, slurmd -D), with
every file (key, socket, slurm.conf, state, spool, logs) in one folder of its own. Nothing of
the machine's own Slurm or MUNGE set-up is used or touched.

Every daemon listens on 127.0.0.1 only: munged on a Unix socket in the folder; slurmctld and
slurmd on TCP ports chosen free at start, bound to loopback by
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny with SlurmctldHost=localhost(127.0.0.1)
and NodeAddr=127.0.0.1 (Slurm 22.05 binds to the address the name resolves to); the two
daemons run with the host name `localhost` (_spawn says why).

    python3 tests/tools/slurm/localslurm.py DIR     # start, print SLURM_CONF=...; Ctrl-C stops
"""
import getpass
import os
import signal
import socket
import subprocess
import sys
import time

NODE = "hlnode"             # Slurm's name for this machine (slurmd -N)
PARTITION = "hl"
DAEMONS = ("munged", "slurmctld", "slurmd")
START_TIMEOUT = 60


class SlurmError(Exception):
    """A daemon did not start; the message carries every log."""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def hardware():
    """This machine as `slurmd -C` sees it: the NodeName line's fields but the name."""
    p = subprocess.run([_which("slurmd"), "-C"], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise SlurmError("slurmd -C failed (exit %d): %s" % (p.returncode, p.stderr.strip()))
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("NodeName=")), "")
    return [f for f in line.split() if f.split("=")[0] in
            ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore")]


class LocalSlurm:
    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.conf = os.path.join(self.root, "slurm.conf")
        self.socket = os.path.join(self.root, "munge", "munge.socket")
        self.procs = {}
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    def path(self, *p):
        return os.path.join(self.root, *p)

    def write_config(self):
        os.makedirs(self.root, exist_ok=True)
        os.chmod(self.root, 0o755)      # munged wants its socket reachable by every user
        for d, mode in (("munge", 0o755), ("munge-key", 0o700), ("state", 0o755),
                        ("spool", 0o755), ("log", 0o755)):
            os.makedirs(self.path(d), mode=mode, exist_ok=True)
            os.chmod(self.path(d), mode)
        key = self.path("munge-key", "munge.key")
        if not os.path.exists(key):
            with open(key, "wb") as f:
                f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        user = getpass.getuser()
        conf = [
            "# a single-node Slurm for hoardlab's tests: tests/tools/slurm/localslurm.py",
            "ClusterName=hoardlab-test",
            "SlurmctldHost=localhost(127.0.0.1)",
            "SlurmctldPort=%d" % free_port(),
            "SlurmdPort=%d" % free_port(),
            "CommunicationParameters=NoCtldInAddrAny,NoInAddrAny",
            "SlurmUser=%s" % user,
            "SlurmdUser=%s" % user,
            "AuthType=auth/munge",
            "CredType=cred/munge",
            "AuthInfo=socket=%s" % self.socket,
            "StateSaveLocation=%s" % self.path("state"),
            "SlurmdSpoolDir=%s" % self.path("spool"),
            "SlurmctldPidFile=%s" % self.path("slurmctld.pid"),
            "SlurmdPidFile=%s" % self.path("slurmd.pid"),
            "SlurmctldLogFile=%s" % self.path("log", "slurmctld.log"),
            "SlurmdLogFile=%s" % self.path("log", "slurmd.log"),
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "SchedulerType=sched/builtin",
            "MpiDefault=none",
            "MailProg=/bin/true",
            "ReturnToService=2",
            "InactiveLimit=0",
            "KillWait=5",
            "MinJobAge=300",
            "NodeName=%s NodeAddr=127.0.0.1 NodeHostname=localhost %s State=UNKNOWN"
            % (NODE, " ".join(hardware())),
            "PartitionName=%s Nodes=%s Default=YES MaxTime=INFINITE State=UP" % (PARTITION, NODE),
        ]
        with open(self.conf, "w") as f:
            f.write("\n".join(conf) + "\n")
        # slurmd always starts its cgroup plugin (22.05 cannot disable it). On a cgroup v2
        # machine it asks systemd for a scope; started here, outside any unit, let it fall back
        # to making its own cgroup. (Checked on this machine's cgroup v1 only: the key is
        # accepted there and changes nothing.)
        with open(os.path.join(self.root, "cgroup.conf"), "w") as f:
            f.write("IgnoreSystemdOnFailure=yes\n")

    def _spawn(self, name, argv, as_localhost=False):
        """Start a daemon. as_localhost: in a UTS namespace of its own whose host name is
        `localhost`, because slurmctld and slurmd resolve the machine's host name to bind
        (NoCtldInAddrAny, NoInAddrAny), and a machine whose name is not in /etc/hosts or DNS
        (a fresh VM, a container) would stop them; `localhost` resolves to 127.0.0.1
        everywhere. Jobs then see `localhost` as their node's name."""
        out = open(self.path("log", name + ".out"), "w")
        cmd = [_which(argv[0])] + argv[1:]
        if as_localhost:
            cmd = [_which("unshare"), "--uts", "sh", "-c", 'hostname localhost && exec "$@"',
                   "sh"] + cmd
        self.procs[name] = subprocess.Popen(cmd, stdout=out,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            env=self.env, start_new_session=True)
        out.close()

    def _until(self, what, ok, timeout=None):
        timeout = timeout or START_TIMEOUT
        t0 = time.time()
        while time.time() - t0 < timeout:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise SlurmError("%s exited (status %s) while waiting for %s\n%s"
                                     % (name, p.returncode, what, self.logs()))
            if ok():
                return
            time.sleep(0.2)
        raise SlurmError("timed out after %d s waiting for %s\n%s" % (timeout, what,
                                                                       self.logs()))

    def _client(self, *argv):
        p = subprocess.run(list(argv), capture_output=True, text=True, env=self.env,
                           timeout=30)
        return p.returncode, p.stdout

    def start(self):
        """Start the three daemons; SlurmError (with every log) if one does not come up."""
        missing = [d for d in DAEMONS + ("sbatch",) if not _which(d)]
        if missing:
            raise SlurmError("not installed: %s (Debian packages in tools/packages/slurm.txt; "
                             "run tools/install-deps)" % ", ".join(missing))
        self.write_config()
        self._spawn("munged", ["munged", "-F", "--force", "-S", self.socket,
                               "--key-file", self.path("munge-key", "munge.key"),
                               "--pid-file", self.path("munge", "munged.pid"),
                               "--seed-file", self.path("munge", "munged.seed"),
                               "--log-file", self.path("log", "munged.log")])
        self._until("munged's socket", lambda: os.path.exists(self.socket))
        self._spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", self.conf], True)
        self._until("slurmctld (scontrol ping)",
                    lambda: "is UP" in self._client("scontrol", "ping")[1])
        self._spawn("slurmd", ["slurmd", "-D", "-f", self.conf, "-N", NODE], True)
        self._until("node %s idle (sinfo)" % NODE,
                    lambda: self._client("sinfo", "-h", "-n", NODE, "-o", "%t")[1].strip()
                    == "idle")
        return self

    def stop(self):
        """SIGTERM each daemon we started (slurmd first), SIGKILL what is left after 15 s."""
        for name in reversed(DAEMONS):
            p = self.procs.get(name)
            if p and p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()

    def logs(self, tail=40):
        out = []
        for f in sorted(os.listdir(self.path("log"))) if os.path.isdir(self.path("log")) else ():
            with open(self.path("log", f), errors="replace") as fh:
                lines = fh.read().splitlines()
            out.append("--- %s (last %d lines)\n%s" % (f, tail, "\n".join(lines[-tail:])))
        return "\n".join(out)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def _which(name):
    import shutil
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: %s DIR" % sys.argv[0])
    c = LocalSlurm(sys.argv[1])
    try:
        c.start()
    except SlurmError as e:
        c.stop()
        sys.exit(str(e))
    print("export SLURM_CONF=%s" % c.conf, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))     # kill PID stops the daemons too
    try:
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        c.stop()
