"""The heap over time: the heap maps of `hoardlab heapmap --out OUTDIR` run into a sweep's
directory (OUTDIR/heapmap-*.log), each drawn beside what its log shows. Nothing when there
are none."""
import glob
import os

from .. import heapmap


def heapmap_section(outdir):
    logs = sorted(glob.glob(os.path.join(outdir, "heapmap-*.log")))
    if not logs:
        return []
    lines = ["## The heap over time (heap maps)", "",
             "Each map is one run with `heap_log` on (`tools/hoardlab heapmap`): a row per "
             "heap (global heaps on top), time to the right, a cell coloured by the heap's "
             "bytes in use over bytes held (grey: it holds nothing); marks: superblocks moved "
             "into the global heap (v), out of it (^), between other heaps (o), given back to "
             "the OS (x). Below, each heap's superblocks. The `.json` beside it opens in "
             "Perfetto or chrome://tracing.", ""]
    for log in logs:
        stem = os.path.splitext(log)[0]
        try:
            if os.path.exists(stem + ".png"):
                f = heapmap.facts(heapmap.read(log))
            else:
                f = heapmap.draw(log, stem + ".png")
        except (OSError, ValueError, KeyError) as e:
            lines += ["`%s` could not be read: %r" % (os.path.basename(log), e), ""]
            continue
        name = os.path.basename(stem)
        lines += ["### %s" % name, "", "![%s](%s.png)" % (name, name), "",
                  heapmap.summary(f) + "." + (" Trace: `%s.json`." % name
                                              if os.path.exists(stem + ".json") else ""), ""]
    return lines
