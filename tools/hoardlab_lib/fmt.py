"""The report's notation, shared by every section and command that prints a table: numbers
with SI suffixes (si), MiB (mib), a measured median with its spread (pm), a check's interval
(iv) and word (mark), a ratio's direction (direction), Markdown tables, and the cores a sweep's numbers were measured on."""
from . import verdicts as V


def si(x):
    if x is None:
        return "–"
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return "%.3g%s" % (x / div, suf)
    return "%.3g" % x


def mib(x):
    return "–" if x is None else "%.2f" % (x / (1 << 20))


SPREAD_NOTE = ("Every measured median in the tables below (a time, a throughput, memory, or "
               "a ratio of them) is shown as `median ±p%`: all repetitions of the group lie "
               "within p% of the median (p = the larger of max/median - 1 and 1 - "
               "min/median); for a ratio of two medians, p covers the ratios of a repetition "
               "of one group to a repetition of the other that the noise rule's interval "
               "keeps. Where p would exceed 100%, the cell shows "
               "the interval itself: `median [min, max]`. `±?`: one repetition, no spread "
               "known. From 9 values on (a group repeated because its verdict was within noise, "
               "a median pooled over runs), p is taken from the k-th smallest and largest "
               "instead, the interval of the median of the noise rule below.")


def pm(s, fmt=si):
    """A Spread (verdicts.Spread) as 'median ±p%' (SPREAD_NOTE): the one notation of a
    measured median in every table; fmt formats the median ('%.2f' or a function)."""
    if s is None or s.med is None:
        return "–"
    text = fmt(s.med) if callable(fmt) else fmt % s.med
    if s.n < 2:
        return text + " ±?"
    if s.rel() > 1.0:       # ±636% reads as nonsense: the interval says what it is
        f = fmt if callable(fmt) else (lambda x: fmt % x)
        return "%s [%s, %s]" % (text, f(s.lo), f(s.hi))
    return "%s ±%.0f%%" % (text, s.rel() * 100)


# A Spread in a check's sentence, with the interval the check decides on:
# '0.38 [0.36, 0.72]' (pm() is the cells' shorter form).
iv = V.interval_text


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def mark(agree):
    """A check's word: True agrees, False **MISMATCH**, None (verdicts.check() could not
    decide: the interval reaches the threshold) within noise."""
    if agree is None:
        return V.WITHIN_NOISE
    return "agrees" if agree else "**MISMATCH**"


def direction(q, above, below):
    """The direction a ratio's interval decides: `above` (wholly above 1), `below` (wholly
    below), else within noise; a ratio of groups measured once (no interval: ±?) decides
    nothing, since a single run's difference may be all noise. '–' without a ratio."""
    if q is None:
        return "–"
    if q.n < 2:
        return "one run, no interval"
    return V.decided(V.check(q, ">", 1.0), above, below)


def cores_of(meta, rows):
    """The machine's cores (meta.json), else the most cores a row saw, else 1."""
    c = (meta.get("machine") or {}).get("cores")
    if not c:
        cs = [r.get("cores") for r in rows if r.get("cores")]
        c = max(cs) if cs else 1
    return int(c)
