"""`hoardlab layers`: the use graph of libhoardlab's files, checked two ways: a file may use
only files of its own layer or below (the order of src/core/hl.h and the README's Layers
table), and no files may use each other in a loop, inside a layer or across layers. Prints
every upward edge and every loop; exit 1 if there is one that KNOWN does not list.

The graph's nodes are files named by their stem: `heap` is src/core/heap.c together with
src/core/heap.h, `strategies/hoard` is src/strategies/hoard.c with hoard.h. Its edges come
from three readings, so that a use hidden in a header is seen:

1. Object files (nm): a symbol a file's object uses and another file's object defines. Code
   inlined from a header is compiled into the including file, so the calls it makes count
   for that file.
2. Headers' code: the bodies of each header's inline functions and macros (comments and
   strings removed). An identifier there that another node defines (a function or variable
   per nm, or an inline function or macro of another node's header) is an
   edge of the header's node: lock.h's `hl_lock_acquire` counts with `HL_COUNT` of stats.h,
   so `lock -> stats`. Plain declarations (prototypes, externs), types and enum constants are
   not uses: a prototype names a function without calling it, and a struct's layout or an
   enum's value is data, like the registry's table below.
3. Sources' uses of headers: an identifier in a .c file that another node's header defines as
   an inline function or macro (these leave no symbol in the object file).

A header counts as part of the node of its stem, except where it is split into sections by
comments of the form `/* ---- NAME.c: ...` (or `NAME.h`): the code under such a heading, up to
the next heading that names a file, is NAME's (the first file named), so hl.h's `thread.c` section is `thread`, heap.h's
`heapselect.c` section is `heapselect`. Two headers have no .c of their stem: hl.h's preamble
(alignment, likely/unlikely) is the node `hl` (base layer), and front.h, the inline malloc and
free, is `interpose`'s, as the README's Layers table pairs them, and entry.h, the front's
test inlined into each strategy's entry, reads only the thread's fields: `thread`'s
(HEADER_NODE).

A loop is a strongly connected set of files; each is printed as one cycle through all of
them, in use order (`a -> b -> c -> a`), and fails unless KNOWN lists exactly that set of
files. KNOWN is an allow-list of the loops and upward edges that exist today, each with the
issue that will remove it; the tests assert it is exactly what remains, so it can only
shrink and no new loop can appear. (A loop is known by its set of files: one more use among
the same files passes, one more file in the loop does not.)

The registry is the one sanctioned exception to the layer order: its table names the
strategies' rows (data, not calls), so registry.c -> strategies/*.c is allowed, and for the
same reason those edges are not part of any loop (each strategy reads the config, which reads
the registry's names).
"""
import collections
import glob
import os
import re
import subprocess

from .common import REPO, ToolError

LAYERS = [
    ("base", ["hl", "msg", "fault", "os", "lock", "bootstrap", "config", "registry"]),
    ("parts", ["arena", "pagemap", "meta", "large", "sizeclass", "thread", "stats",
               "superblock", "purge", "heap", "selector", "heapselect", "remote", "heappaths", "sharded", "globalheap", "tlab", "singleheap",
               "hazard", "lfstack", "lfqueue"]),
    ("strategies", ["strategies/*"]),
    ("instruments", ["observe", "census", "trace", "checks"]),
    ("front", ["interpose", "export", "fork", "init", "api"]),
]
ALLOWED = {("registry", "strategies")}
# a header whose code is another file's: entry.h is the front's test of a call on the
# thread's own fields (hl_me), inlined into every strategy's entry, so `thread`'s
HEADER_NODE = {"front": "interpose", "entry": "thread"}
TARGETS = ("src/libhoardlab_core.a",)   # what `hoardlab layers` builds first: the objects read

# The loops and upward edges that exist today and are to be removed. A loop is the set of its
# files; an upward edge is (user, definer). Each says which issue removes it and why it is
# still here. Remove an entry when its knot is untied: the tests fail while an entry lists
# something that no longer exists, and `hoardlab layers` fails on anything not listed.
KNOWN = {
    "loops": {
    },
    "upward": {
    },
}

SECTION = re.compile(r"/\*\s*-{3,}\s*([\w/]+)\.[ch]\b")
IDENT = re.compile(r"(?<!\w)[A-Za-z_]\w*")     # not the x of 0x10


def layer_of(name):
    for i, (layer, members) in enumerate(LAYERS):
        if name in members or ("strategies/*" in members and name.startswith("strategies/")):
            return i, layer
    return None, None


def objects(bdir):
    """{file name: object path} of the static core, e.g. 'heap' or 'strategies/hoard'."""
    out = {}
    for o in glob.glob(os.path.join(bdir, "src", "libhoardlab_core.a.p", "*.o")):
        base = os.path.basename(o)[:-len(".c.o")]
        if base.startswith("core_"):
            out[base[len("core_"):]] = o
        elif base.startswith("strategies_"):
            out["strategies/" + base[len("strategies_"):]] = o
    if not out:
        raise ToolError("no object files under %s/src/libhoardlab_core.a.p: build first" % bdir)
    return out


def symbol_graph(objs):
    """({symbol: definer}, {(user, definer): [symbols]}) from the object files (nm)."""
    defs, uses = {}, collections.defaultdict(set)
    for name, path in objs.items():
        p = subprocess.run(["nm", path], capture_output=True, text=True, check=True)
        for line in p.stdout.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBRV":
                defs[parts[2]] = name
            elif len(parts) == 2 and parts[0] == "U":
                uses[name].add(parts[1])
    edges = collections.defaultdict(list)
    for user, syms in uses.items():
        for s in sorted(syms):
            definer = defs.get(s)
            if definer and definer != user:
                edges[(user, definer)].append(s)
    return defs, edges


# --- reading C text ------------------------------------------------------------------------

def strip(text):
    """C text without comments, string and character literals (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j) or " ")
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" ")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def sections(path, node):
    """[(node, text)] of a header: its text split at `/* ---- NAME.c` headings."""
    prefix = "strategies/" if os.path.basename(os.path.dirname(path)) == "strategies" else ""
    with open(path) as f:
        text = f.read()
    out, start, owner = [], 0, node
    for m in SECTION.finditer(text):
        out.append((owner, text[start:m.start()]))
        owner, start = prefix + m.group(1), m.start()
    out.append((owner, text[start:]))
    return [(o, strip(t)) for o, t in out]


def header_code(text):
    """{name: [identifiers it references]} of one stripped header text: its macros' and inline
    functions' bodies (a struct's or enum's body is skipped: types and constants are data)."""
    defs = {}
    lines = text.replace("\\\n", " ").split("\n")
    code = []
    for line in lines:
        s = line.strip()
        if s.startswith("#"):
            m = re.match(r"#\s*define\s+(\w+)(\([^)]*\))?(.*)", s)
            if m:
                params = set(IDENT.findall(m.group(2) or ""))
                defs.setdefault(m.group(1), []).extend(
                    t for t in IDENT.findall(m.group(3)) if t not in params)
            code.append("")
        else:
            code.append(line)
    toks = re.findall(r"(?<!\w)[A-Za-z_]\w*|[{};()]", "\n".join(code))
    depth, head, fn, body = 0, [], None, []
    for t in toks:
        if depth == 0:
            if t == "{":
                depth, body, fn = 1, [], None
                if "inline" in head:
                    fn = next((head[k - 1] for k in range(1, len(head)) if head[k] == "("
                               and IDENT.match(head[k - 1]) and head[k - 1] != "__attribute__"),
                              None)
            elif t == ";":
                head = []
            else:
                head.append(t)
        elif t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if depth == 0:
                if fn:
                    defs.setdefault(fn, []).extend(x for x in body if IDENT.match(x))
                head = [] if fn else ["}"]
        else:
            body.append(t)
    return defs


def headers(src):
    """[(node, header file, text section)] of every header under src/core and src/strategies."""
    out = []
    for d, prefix in (("core", ""), ("strategies", "strategies/")):
        for h in sorted(glob.glob(os.path.join(src, d, "*.h"))):
            stem = prefix + os.path.basename(h)[:-2]
            stem = HEADER_NODE.get(stem, stem)
            for owner, text in sections(h, stem):
                out.append((owner, os.path.relpath(h, os.path.join(src, d)), text))
    return out


def source_graph(src, sym_defs, nodes):
    """{(user, definer): [names]} from headers' code (2.) and sources' uses of it (3.)."""
    hdr = []                                  # (node, header, {name: refs})
    hdefs = {}                                # name -> node defining it in a header
    for owner, hname, text in headers(src):
        code = header_code(text)
        hdr.append((owner, hname, code))
        for name in code:
            hdefs.setdefault(name, owner)
    edges = collections.defaultdict(list)
    for owner, hname, code in hdr:
        for name, refs in sorted(code.items()):
            for r in sorted(set(refs)):
                definer = sym_defs.get(r) or hdefs.get(r)
                ref = "%s: %s" % (hname, r)
                if definer and definer != owner and ref not in edges[(owner, definer)]:
                    edges[(owner, definer)].append(ref)
    for node in nodes:
        path = os.path.join(src, "strategies" if node.startswith("strategies/") else "core",
                            node.split("/")[-1] + ".c")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            names = set(IDENT.findall(strip(f.read())))
        for r in sorted(names):
            definer = hdefs.get(r)
            if definer and definer != node:
                edges[(node, definer)].append(r)
    return edges


def graph(bdir, src=None):
    """{(user, definer): [what is used]} over the core's files: objects and headers."""
    objs = objects(bdir)
    sym_defs, edges = symbol_graph(objs)
    for key, names in source_graph(src or os.path.join(REPO, "src"), sym_defs, objs).items():
        have = set(edges.get(key, ()))
        edges.setdefault(key, []).extend(n for n in names if n not in have)
    return dict(edges)


# --- the checks ----------------------------------------------------------------------------

def upward(edges, known=None):
    """The edges that point to a higher layer (or touch a file no layer lists), except those
    `known` lists: [(user, user's layer, definer, definer's layer, what is used)]."""
    known = known or {}
    bad = []
    for (user, definer), syms in sorted(edges.items()):
        (lu, nu), (ld, nd) = layer_of(user), layer_of(definer)
        if (user, definer) in known:
            continue
        if lu is None or ld is None:
            bad.append((user, nu, definer, nd, syms))
        elif ld > lu and (user, nd) not in ALLOWED:
            bad.append((user, nu, definer, nd, syms))
    return bad


def calls(edges):
    """The edges that can close a loop: all but the ALLOWED data edges (registry's rows)."""
    return {(u, d): s for (u, d), s in edges.items()
            if (u, layer_of(d)[1]) not in ALLOWED}


def components(edges):
    """The strongly connected sets of two files or more (Tarjan), each a frozenset."""
    succ = collections.defaultdict(set)
    for u, d in calls(edges):
        if u != d:
            succ[u].add(d)
    nodes = sorted(set(succ) | {d for s in succ.values() for d in s})
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):                              # iterative: no recursion limit to meet
        work = [(v, iter(sorted(succ[v])))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        while work:
            w, it = work[-1]
            for x in it:
                if x not in index:
                    index[x] = low[x] = len(index)
                    stack.append(x)
                    on.add(x)
                    work.append((x, iter(sorted(succ[x]))))
                    break
                if x in on:
                    low[w] = min(low[w], index[x])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[w])
                if low[w] == index[w]:
                    comp = set()
                    while True:
                        x = stack.pop()
                        on.discard(x)
                        comp.add(x)
                        if x == w:
                            break
                    if len(comp) > 1:
                        out.append(frozenset(comp))

    for v in nodes:
        if v not in index:
            visit(v)
    return sorted(out, key=lambda c: sorted(c))


def cycle_through(comp, edges):
    """One closed walk through every file of a strongly connected set, in use order, starting
    at its first file by name: [a, b, ..., a]. Short hops (breadth first) between files."""
    succ = collections.defaultdict(list)
    for u, d in sorted(calls(edges)):
        if u in comp and d in comp and u != d:
            succ[u].append(d)

    def path(a, b):
        prev, frontier = {a: None}, collections.deque([a])
        while frontier:
            v = frontier.popleft()
            for w in succ[v]:
                if w not in prev:
                    prev[w] = v
                    frontier.append(w)
        out, v = [], b
        while v is not None:
            out.append(v)
            v = prev[v]
        return out[::-1]

    start = min(comp)
    walk, seen = [start], {start}
    while len(seen) < len(comp):
        v = walk[-1]
        target = min(comp - seen, key=lambda t: (len(path(v, t)), t))
        hop = path(v, target)[1:]
        walk.extend(hop)
        seen.update(hop)
    walk.extend(path(walk[-1], start)[1:])
    return walk


def loops(edges, known=None):
    """[(files in use order, closing at the first; allowed: (issue, why) or None)]."""
    known = known or {}
    return [(cycle_through(c, edges), known.get(c)) for c in components(edges)]


def stale(edges, known=KNOWN):
    """The entries of `known` that no longer describe the graph: a listed loop that is not
    exactly a strongly connected set now, a listed upward edge that is gone."""
    comps = set(components(edges))
    out = [("loop", sorted(c)) for c in known["loops"] if c not in comps]
    out += [("upward", e) for e in known["upward"] if e not in edges]
    return out


def report(bdir, src=None, known=KNOWN):
    """(failed, text) of the build's graph (check)."""
    return check(graph(bdir, src), known)


NOTHING_KNOWN = {"loops": {}, "upward": {}}     # `hoardlab layers --strict`: issue 26's target


def check(edges, known=KNOWN):
    """(failed, text): the graph's size, every upward edge and loop, and stale entries."""
    bad = upward(edges, known["upward"])
    found = loops(edges, known["loops"])
    new = [w for w, why in found if why is None]
    old = stale(edges, known)
    issues = sorted({n for n, _ in list(known["loops"].values()) + list(known["upward"].values())})
    lines = ["%d files, %d use edges (objects and headers), %d pointing upward, %d loops "
             "(%d known%s)" % (
                 len({u for u, _ in edges} | {d for _, d in edges}), len(edges), len(bad),
                 len(found), len(found) - len(new),
                 ": issue " + ", ".join(map(str, issues)) if issues else "")]
    for user, nu, definer, nd, syms in bad:
        lines.append("  upward: %s (%s) -> %s (%s): %s" % (
            user, nu or "no layer", definer, nd or "no layer", ", ".join(syms[:4])))
    for (user, definer), (issue, _) in sorted(known["upward"].items()):
        if (user, definer) in edges:
            lines.append("  known upward (issue %d): %s -> %s: %s" % (
                issue, user, definer, ", ".join(edges[(user, definer)][:4])))
    for walk, why in found:
        hops = ["%s -> %s (%s)" % (a, b, ", ".join(edges[(a, b)][:2]))
                for a, b in zip(walk, walk[1:])]
        lines.append("  %s: %s" % ("known loop (issue %d)" % why[0] if why else "LOOP",
                                   " -> ".join(walk)))
        lines.extend("      " + h for h in hops)
    for kind, what in old:
        lines.append("  stale entry of KNOWN (%s %s): it is gone; remove it from "
                     "tools/hoardlab_lib/layers.py" % (kind, " ".join(what)))
    return bool(bad or new or old), "\n".join(lines)
