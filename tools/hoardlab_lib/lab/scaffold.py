"""`hoardlab new NAME [--from ROW]`: a strategy of one's own, ready to run (docs/lab.md).

Writes src/strategies/NAME.c from a commented template (templates/: a single heap, or private
heaps with ownership), its test tests/strategies/lab_NAME.c, adds NAME to meson_options.txt's
one list of strategies, reconfigures the build directory (do_build: build.sync_strategies),
builds the library and hlconfig, and regenerates docs/config.md from the key table, so that the next
`hoardlab run -a NAME` and `hoardlab test --strategy NAME` work.

`hoardlab new --remove NAME` undoes it: the two files, NAME's entry in meson_options.txt, the
build reconfigured without it and docs/config.md regenerated. It removes only a strategy that
`new` made (its file says so in its first lines); a shipped one is refused."""
import keyword
import os
import re
import subprocess

from ..build import OPTIONS, STRATEGIES_OPTION, do_build, listed_strategies
from ..common import REPO, ToolError, build_dir, log, require

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
# --from ROW: the template and its settings. serial and concurrent are the uC++ single heap
# (one heap lock, or a lock per free list); the heap rows start as ownership.
FROM = {
    "serial": ("single.c", {"PER_LIST": "false", "LOCKS": "one heap lock"}),
    "concurrent": ("single.c", {"PER_LIST": "true", "LOCKS": "a lock per size-class free list"}),
    "private": ("heap.c", {}),
    "ownership": ("heap.c", {}),
    "hoard": ("heap.c", {}),
}
NAME = re.compile(r"^[a-z][a-z0-9_]{0,30}$")
# C keywords and names the core or the build already uses for something else
RESERVED = {"auto", "break", "case", "char", "const", "continue", "default", "do", "double",
            "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long",
            "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
            "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "all",
            "glibc", "jemalloc", "mimalloc", "mimalloc3", "tcmalloc", "snmalloc", "heaps",
            "sh", "sb", "heap"}


def check_name(name, existing, repo=REPO):
    """A new strategy's name: a lower-case C identifier (it names the row hl_strategy_NAME and
    the HOARD_STRATEGY value), not a strategy, allocator or keyword already."""
    if not NAME.match(name) or keyword.iskeyword(name):
        raise ToolError("new: '%s' is not a strategy name: lower-case letters, digits and _, "
                        "starting with a letter, at most 31 characters (e.g. tcache)" % name)
    if name in RESERVED:
        raise ToolError("new: '%s' is taken (a C keyword or an allocator's name)" % name)
    for path in (os.path.join(repo, "src", "strategies", name + ".c"),
                 os.path.join(repo, "src", "strategies", name)):
        if os.path.exists(path):
            raise ToolError("new: %s exists already" % os.path.relpath(path, repo))
    if name in existing:
        raise ToolError("new: meson_options.txt lists '%s' already" % name)


def render(template, values):
    with open(os.path.join(TEMPLATES, template)) as f:
        text = f.read()
    for k, v in values.items():
        text = text.replace("@%s@" % k, v)
    left = re.findall(r"@[A-Z_]+@", text)
    assert not left, left
    return text


def add_to_options(name, path=OPTIONS):
    """Append name to the strategies list of meson_options.txt, keeping the file's form."""
    with open(path) as f:
        text = f.read()
    m = STRATEGIES_OPTION.search(text)
    inner = m.group(1)
    new = inner[:-1].rstrip() + ", '%s']" % name
    text = text[:m.start(1)] + new + text[m.end(1):]
    with open(path, "w") as f:
        f.write(text)


MADE_BY = "Made by `tools/hoardlab new %s "        # in the first lines of a template's file


def made_by_new(name, repo=REPO):
    """Whether src/strategies/NAME.c is one `new` wrote (its header names the command)."""
    path = os.path.join(repo, "src", "strategies", name + ".c")
    if not os.path.exists(path):
        return False
    with open(path) as f:
        return MADE_BY % name in f.read(2000)


def remove_from_options(name, path=OPTIONS):
    """Take name out of the strategies list of meson_options.txt, keeping the file's form."""
    with open(path) as f:
        text = f.read()
    m = STRATEGIES_OPTION.search(text)
    inner = re.sub(r",\s*'%s'(?=[,\]])|'%s',\s*" % (name, name), "", m.group(1), count=1)
    with open(path, "w") as f:
        f.write(text[:m.start(1)] + inner + text[m.end(1):])


def remove(name, bdir, build=True, repo=REPO):
    """Undo `new name` in the tree at `repo`: its files and its meson_options.txt entry;
    returns the files removed or changed. A strategy `new` did not make is refused."""
    options = os.path.join(repo, "meson_options.txt")
    listed = listed_strategies(options)
    ours = [s for s in listed if made_by_new(s, repo)]
    src = os.path.join(repo, "src", "strategies", name + ".c")
    if os.path.exists(src) or os.path.isdir(os.path.join(repo, "src", "strategies", name)):
        if not made_by_new(name, repo):
            raise ToolError("new --remove: %s is a shipped strategy, not one `new` made; only "
                            "those are removed (made by `new`: %s)"
                            % (name, ", ".join(ours) or "none"))
    elif name not in listed:            # (files deleted by hand, still listed: removed)
        raise ToolError("new --remove: no strategy '%s'; made by `new`: %s"
                        % (name, ", ".join(ours) or "none"))
    gone = []
    for path in (os.path.join(repo, "src", "strategies", name + ".c"),
                 os.path.join(repo, "tests", "strategies", "lab_%s.c" % name)):
        if os.path.exists(path):
            os.remove(path)
            gone.append(path)
    if name in listed:
        remove_from_options(name, options)
        gone.append(options)
    log("new --remove: removed %s" % ", ".join(os.path.relpath(p, repo) for p in gone))
    if build:
        do_build(bdir, targets=("src/libhoardlab.so", "src/hlconfig", "harness/hlbench"))
        regenerate_docs(bdir)
        gone.append(os.path.join(REPO, "docs", "config.md"))
    return gone


def regenerate_docs(bdir):
    """docs/config.md from the key table (the test config-docs-current compares them)."""
    out = subprocess.run([require(bdir, "hlconfig"), "--markdown"], capture_output=True,
                         text=True, check=True).stdout
    with open(os.path.join(REPO, "docs", "config.md"), "w") as f:
        f.write(out)


def new(name, origin, bdir, build=True, repo=REPO):
    """Scaffold strategy `name` from row `origin` in the tree at `repo`; returns the files
    written or changed."""
    if origin not in FROM:
        raise ToolError("new: --from %s: valid choices: %s" % (origin, ", ".join(FROM)))
    options = os.path.join(repo, "meson_options.txt")
    check_name(name, listed_strategies(options), repo)
    template, values = FROM[origin]
    values = dict(values, NAME=name, FROM=origin)
    src = os.path.join(repo, "src", "strategies", name + ".c")
    test = os.path.join(repo, "tests", "strategies", "lab_%s.c" % name)
    with open(src, "w") as f:
        f.write(render(template, values))
    with open(test, "w") as f:
        f.write(render("test.c", values))
    add_to_options(name, options)
    files = [src, test, options]
    log("new: wrote %s and %s; added %s to meson_options.txt" % (
        os.path.relpath(src, repo), os.path.relpath(test, repo), name))
    if not build:
        return files
    do_build(bdir, targets=("src/libhoardlab.so", "src/hlconfig", "harness/hlbench"))
    regenerate_docs(bdir)
    files.append(os.path.join(REPO, "docs", "config.md"))
    return files


def cmd_new(a):
    bdir = build_dir(a.build_dir)
    if a.remove:
        files = remove(a.name, bdir, build=not a.no_build)
        print("removed strategy %s:" % a.name)
        for f in files:
            print("  %s" % os.path.relpath(f, REPO))
        return 0
    files = new(a.name, a.origin, bdir, build=not a.no_build)
    print("new strategy %s:" % a.name)
    for f in files:
        print("  %s" % os.path.relpath(f, REPO))
    print("next: edit %s, then\n  tools/hoardlab run threadtest -a %s -t 2\n"
          "  tools/hoardlab test --strategy %s\n  tools/hoardlab grade %s"
          % (os.path.relpath(files[0], REPO), a.name, a.name, a.name))
    return 0


def add_parser(sub):
    s = sub.add_parser("new", help="scaffold a strategy of your own: src/strategies/NAME.c from "
                       "a commented template, its test, its name in meson_options.txt, the "
                       "build reconfigured and docs/config.md regenerated (docs/lab.md); "
                       "--remove NAME undoes it")
    s.add_argument("name", help="the strategy's name, a C identifier (e.g. tcache)")
    s.add_argument("--from", dest="origin", default="serial", choices=sorted(FROM),
                   help="the row to start from, one of two templates: serial or concurrent "
                   "start from the single-heap template (one heap lock, or a lock per size-"
                   "class free list); private, ownership and hoard all start from the same "
                   "heap template, private heaps with ownership (default serial)")
    s.add_argument("--remove", action="store_true", help="undo `new NAME`: remove its two "
                   "files and its entry in meson_options.txt, rebuild; only a strategy `new` "
                   "made")
    s.add_argument("--no-build", action="store_true", help="write (or remove) the files only")
    s.set_defaults(func=cmd_new)
