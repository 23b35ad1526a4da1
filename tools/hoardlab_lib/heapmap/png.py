"""The heap map: heaps x time, coloured by fullness (bytes in use over bytes held), the moves
to and from the global heap marked, as a PNG."""
import os

from .. import plotkit
from .log import facts, label, moves, read, released, series

BINS = 300               # time columns of the map
MAX_ROWS = 48            # heaps drawn: the global heaps, then those holding the most


def rows_of(log, f):
    """The heaps drawn, top down: global heaps, then the others by number (the MAX_ROWS
    holding the most at their peak)."""
    glob = f["global_heaps"]
    rest = sorted((h for h in f["heaps"] if h not in glob), key=lambda h: -f["peak_held"][h])
    return glob + sorted(rest[:MAX_ROWS - len(glob)])


def grid(log, rows, t_end):
    """Fullness (u / a) of each heap at the end of each time column; None where it holds
    nothing or has no line yet."""
    by = series(log)
    out = []
    for h in rows:
        lines, i, last, cells = by.get(h, []), 0, None, []
        for b in range(BINS):
            edge = (b + 1) * t_end / BINS
            while i < len(lines) and lines[i].t <= edge:
                last, i = lines[i], i + 1
            cells.append(last.u / last.a if last is not None and last.a else None)
        out.append(cells)
    return out


def _marks(ax, log, rows, ms_per_ns):
    """Moves on the map: into the global heap (v), out of it (^), between other heaps (o),
    to the OS (x), each on the row of the heap it went to (the OS: it left)."""
    where = {h: i for i, h in enumerate(rows)}
    kinds = (("to the global heap", "v", "tab:red", lambda m: m.to_global),
             ("from the global heap", "^", "white", lambda m: m.from_global),
             ("between heaps", "o", "tab:orange", lambda m: not (m.to_global or m.from_global)))
    ms = moves(log)
    for label, marker, colour, pick in kinds:
        pts = [(m.t * ms_per_ns, where[m.dst]) for m in ms if pick(m) and m.dst in where]
        if pts:
            ax.scatter(*zip(*pts), marker=marker, s=14, c=colour, edgecolors="black",
                       linewidths=0.3, label="%s (%d)" % (label, len(pts)), zorder=3)
    pts = [(ln.t * ms_per_ns, where[ln.heap]) for ln in released(log) if ln.heap in where]
    if pts:
        ax.scatter(*zip(*pts), marker="x", s=14, c="black", linewidths=0.6,
                   label="to the OS (%d)" % len(pts), zorder=3)


def draw(log_path, png_path, title=None):
    """The heap map of a heap log as a PNG: heaps x time coloured by fullness, the moves
    marked, and below it each heap's superblocks over time. Returns the log's facts."""
    log = read(log_path)
    f = facts(log)
    plt = plotkit.plt()
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True, layout="constrained",
                                  gridspec_kw={"height_ratios": [3, 2]})
    rows = rows_of(log, f)
    t_end = max([ln.t for ln in log.lines] + [1])
    ms_per_ns = 1e-6
    cells = grid(log, rows, t_end)
    cmap = plt.get_cmap("viridis").with_extremes(bad="#eeeeee")   # grey: holds nothing
    data = [[float("nan") if c is None else c for c in row] for row in cells] or [[float("nan")]]
    im = ax.imshow(data, aspect="auto", interpolation="nearest", cmap=cmap, vmin=0, vmax=1,
                   extent=(0, t_end * ms_per_ns, len(rows) - 0.5, -0.5))
    # beside both panels, so that their time axes stay aligned
    fig.colorbar(im, ax=(ax, ax2), label="fullness (top): bytes the heap counts in use / "
                 "held;\n'full' may be blocks another thread freed (caption)", pad=0.01,
                 fraction=0.04)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([label(h, f) + (" *" if h in f["stranded"] else "") for h in rows],
                       fontsize=6 if len(rows) > 16 else 8)
    _marks(ax, log, rows, ms_per_ns)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="upper right", framealpha=0.8)
    plotkit.title(ax, title or "Heap map: " + os.path.basename(log_path))
    if f["stranded"]:
        ax.set_xlabel("* counts more in use than the process has live: its 'full' is blocks "
                      "another thread freed, free but unusable to it", fontsize=7)
    for h in rows[:10]:
        lines = series(log).get(h, [])
        ax2.step([ln.t * ms_per_ns for ln in lines], [sum(ln.counts) for ln in lines],
                 where="post", label=label(h, f))
    ax2.set_xlabel("time (ms)")
    ax2.set_ylabel("superblocks held")
    ax2.set_ylim(bottom=0)
    if rows:
        ax2.legend(fontsize=7, loc="upper left", ncol=2, framealpha=0.8)
    fig.savefig(png_path, dpi=110)
    plt.close(fig)
    return f
