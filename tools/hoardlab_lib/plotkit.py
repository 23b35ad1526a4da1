"""The plotting kit every plot of the report draws with: matplotlib imported once it is
needed (it is slow, and optional until a plot is drawn), error bars from Spreads, axes that
turn logarithmic over a wide span, legends beside the axes, wrapped titles, file names."""
import os
import textwrap

LOG_SPAN = 10.0         # values spanning this factor or more get a log axis
TITLE_WIDTH = 60        # characters per line of a title


def save(fig, outdir, name):
    """Lay out, write outdir/name as PNG, close the figure; return name."""
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, name), dpi=110)
    plt().close(fig)
    return name


def plt():
    """matplotlib.pyplot, drawing to files (Agg)."""
    import matplotlib                   # deferred: slow, and optional until a plot is drawn
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot  # deferred: slow, and optional until a plot is drawn
    return pyplot


MARKERS = "os^vD<>pPX*h"


def plain_log(ax):
    """Log y axis with plain numbers at 1, 2 and 5 x 10^k (0.5, 1, 2, 5, 10), instead of
    powers of ten or a lone 1."""
    from matplotlib.ticker import (FuncFormatter, LogLocator,  # deferred: slow, optional
                                   NullFormatter)
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: "%g" % y))
    ax.yaxis.set_minor_formatter(NullFormatter())


def value_axis(ax, values):
    """Linear from 0 when the positive values span less than LOG_SPAN, else plain_log."""
    vs = [v for v in values if v and v > 0]
    if vs and max(vs) / min(vs) >= LOG_SPAN:
        plain_log(ax)
        return True
    ax.set_ylim(bottom=0)
    return False


def yerr(spreads, scale=1.0):
    """Asymmetric error bars [[below], [above]] of Spreads (0 for a missing one or one
    without repetitions)."""
    lo, hi = [], []
    for s in spreads:
        if s is None or s.n < 2:
            lo.append(0.0)
            hi.append(0.0)
        else:
            lo.append(max(0.0, (s.med - s.lo) * scale))
            hi.append(max(0.0, (s.hi - s.med) * scale))
    return [lo, hi]


LEGEND_ENTRY_PT = 11    # the height of one legend entry at fontsize 7, in points
LEGEND_COLUMN_IN = 1.6  # the width the figure gains for each legend column beyond the first


def legend(ax, **kw):
    """A legend outside the axes, on the right, so that it covers no data; in as many columns
    as keep it within the axes' height, the figure widened for each (a sweep of 45 allocators
    drew one column past the figure's bottom, and tight_layout gave up)."""
    fig = ax.get_figure()
    fits = max(1, int(ax.get_position().height * fig.get_figheight() * 72 // LEGEND_ENTRY_PT))
    ncol = kw.pop("ncol", -(-len(ax.get_legend_handles_labels()[0]) // fits))
    if ncol > 1:                # widen from the figure's own width, once per figure
        base = fig.__dict__.setdefault("hl_base_width", fig.get_figwidth())
        fig.set_figwidth(max(fig.get_figwidth(), base + (ncol - 1) * LEGEND_COLUMN_IN))
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
              ncol=max(1, ncol), **kw)


def title(ax, text, **kw):
    """The whole title, wrapped at TITLE_WIDTH characters."""
    ax.set_title("\n".join(textwrap.wrap(text, TITLE_WIDTH)), **kw)


def fname(s):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in s)
