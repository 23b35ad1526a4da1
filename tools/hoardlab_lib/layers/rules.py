"""The checks of a use graph {(user, definer): [what is used]}: edges that point to a higher
layer (or touch a file no layer lists), and loops, inside a layer or across layers.

A loop is a strongly connected set of files; each is printed as one cycle through all of
them, in use order (`a -> b -> c -> a`), and fails unless the allow-list (known.py) lists
exactly that set. A tree's allowed data edges (Tree.allowed: (user, layer) pairs; every tree's
is empty today) would point upward without failing and close no loop.
"""
import collections

from .known import EMPTY
from .order import SRC, layer_of


def upward(edges, known=None, tree=SRC):
    """The edges that point to a higher layer (or touch a file no layer lists), except those
    `known` lists: [(user, user's layer, definer, definer's layer, what is used)]. A tree
    without layers (tools/) has none."""
    known = known or {}
    bad = []
    for (user, definer), syms in sorted(edges.items()):
        if tree.layers is None or (user, definer) in known:
            continue
        (lu, nu), (ld, nd) = layer_of(user, tree.layers), layer_of(definer, tree.layers)
        if lu is None or ld is None:
            bad.append((user, nu, definer, nd, syms))
        elif ld > lu and (user, nd) not in tree.allowed:
            bad.append((user, nu, definer, nd, syms))
    return bad


def calls(edges, tree=SRC):
    """The edges that can close a loop: all but the allowed data edges (Tree.allowed)."""
    return {(u, d): s for (u, d), s in edges.items()
            if (u, layer_of(d, tree.layers)[1]) not in tree.allowed}


def components(edges, tree=SRC):
    """The strongly connected sets of two files or more (Tarjan), each a frozenset."""
    succ = collections.defaultdict(set)
    for u, d in calls(edges, tree):
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


def cycle_through(comp, edges, tree=SRC):
    """One closed walk through every file of a strongly connected set, in use order, starting
    at its first file by name: [a, b, ..., a]. Short hops (breadth first) between files."""
    succ = collections.defaultdict(list)
    for u, d in sorted(calls(edges, tree)):
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


def loops(edges, known=None, tree=SRC):
    """[(files in use order, closing at the first; allowed: known.py's entry or None)]."""
    known = known or {}
    return [(cycle_through(c, edges, tree), known.get(c)) for c in components(edges, tree)]


def stale(edges, known=EMPTY, tree=SRC):
    """The entries of `known` that no longer describe the graph: a listed loop that is not
    exactly a strongly connected set now, a listed upward edge that is gone."""
    comps = set(components(edges, tree))
    out = [("loop", sorted(c)) for c in known["loops"] if c not in comps]
    out += [("upward", e) for e in known["upward"] if e not in edges]
    return out


def check(edges, known=EMPTY, tree=SRC):
    """(failed, text): the graph's size, every upward edge and loop, and stale entries."""
    bad = upward(edges, known["upward"], tree)
    found = loops(edges, known["loops"], tree)
    new = [w for w, why in found if why is None]
    old = stale(edges, known, tree)
    size = "%s: %d files, %d use edges (objects and headers), %d pointing upward" % (
        tree.name, len({u for u, _ in edges} | {d for _, d in edges}), len(edges), len(bad))
    if tree.layers is None:
        size = "%s: %d modules, %d import edges" % (
            tree.name, len({u for u, _ in edges} | {d for _, d in edges}), len(edges))
    lines = ["%s, %d loops (%d known)" % (size, len(found), len(found) - len(new))]
    for user, nu, definer, nd, syms in bad:
        lines.append("  upward: %s (%s) -> %s (%s): %s" % (
            user, nu or "no layer", definer, nd or "no layer", ", ".join(syms[:4])))
    for (user, definer), (_, why) in sorted(known["upward"].items()):
        if (user, definer) in edges:
            lines.append("  known upward: %s -> %s: %s (%s)" % (
                user, definer, ", ".join(edges[(user, definer)][:4]), why))
    for walk, why in found:
        hops = ["%s -> %s (%s)" % (a, b, ", ".join(edges[(a, b)][:2]))
                for a, b in zip(walk, walk[1:])]
        lines.append("  %s: %s" % ("known loop (%s)" % why[1] if why else "LOOP",
                                   " -> ".join(walk)))
        lines.extend("      " + h for h in hops)
    for kind, what in old:
        lines.append("  stale entry of KNOWN (%s %s): it is gone; remove it from "
                     "tools/hoardlab_lib/layers/known.py" % (kind, " ".join(what)))
    return bool(bad or new or old), "\n".join(lines)
