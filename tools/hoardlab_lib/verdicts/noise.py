"""A median with its spread, and checks that say when they cannot decide (NOISE_RULE):
the numbers every verdict and every table cell is made of."""
import functools
import math
import statistics


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def gmean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def interval_text(s, fmt="%.2f"):
    """'1.23 [1.18, 1.30]': a Spread in a sentence (a verdict's evidence, a check), with the
    interval it is decided on; '1.23' without spread, '–' for None. fmt: '%.2f' or a
    function. (Table cells use report.pm, the shorter 'median ±p%'.)"""
    if s is None or s.med is None:
        return "–"
    f = fmt if callable(fmt) else (lambda x: fmt % x)
    if s.n < 2 or s.lo == s.hi:
        return f(s.med)
    return "%s [%s, %s]" % (f(s.med), f(s.lo), f(s.hi))


def decided(holds, yes="yes", no="no"):
    """A verdict's value from check(): yes / no, or WITHIN_NOISE."""
    return WITHIN_NOISE if holds is None else (yes if holds else no)


# Runs shorter than this are flagged: below about 0.1 s what is timed is no longer mostly the
# allocator. Creating and joining the threads (tens of microseconds each), the first page
# faults of the heap and the binary (a few milliseconds), and above all one scheduler time
# slice lost to another process on a shared machine (4-10 ms) are fixed costs: at 0.1 s one
# lost slice is up to 10% of the run, at 0.04 s a quarter of it.
SHORT_RUN_S = 0.1
WITHIN_NOISE = "within noise"
NOISE_RULE = ("A check or verdict is decided only when the interval of its number lies wholly "
              "on one side of its threshold; when the interval reaches the threshold (or a "
              "number is exactly at it) it says *%s*. The interval of a median is the min-max "
              "over its repetitions up to 8 of them; from 9 on, the k-th smallest to the k-th "
              "largest, k as large as keeps the chance that it misses the true median at most "
              "what min-max of 5 has (1/16: k = 2 from 9 repetitions, 3 from 12, 4 from 14), so "
              "that more repetitions can narrow it; of a ratio of two medians a/b, [min a / max b, max a / "
              "min b]; of a geometric mean, the geometric means of the ends. A group measured "
              "once has no interval (its cell says ±?)." % WITHIN_NOISE)


class Spread(tuple):
    """A median over repetitions and the interval [lo, hi] around it (min-max, or the
    interval of a ratio), from n repetitions (n = 1: no spread known)."""
    __slots__ = ()

    def __new__(cls, med, lo, hi, n):
        return tuple.__new__(cls, (med, lo, hi, n))

    med = property(lambda s: s[0])
    lo = property(lambda s: s[1])
    hi = property(lambda s: s[2])
    n = property(lambda s: s[3])

    def rel(self):
        """The half-width of the interval relative to the median: the larger of
        hi/med - 1 and 1 - lo/med (0 when the median is 0)."""
        if not self.med:
            return 0.0
        return max(self.hi / self.med - 1.0, 1.0 - self.lo / self.med)


# The confidence of min-max over 5 repetitions that it holds the true median (1 - 2/2^5):
# the level every median's interval keeps, whatever the number of repetitions.
MEDIAN_CONFIDENCE = 15 / 16


@functools.lru_cache(maxsize=None)
def order_k(n):
    """The largest k such that [k-th smallest, k-th largest] of n repetitions holds the true
    median with at least MEDIAN_CONFIDENCE (distribution-free: the number of repetitions
    below the median is binomial(n, 1/2)); 1 (min-max) up to 8 repetitions.

    Why: min-max can only widen as repetitions are added, so repeating a group whose verdict
    is within noise (execute.repeat_undecided) could never decide it; this interval narrows
    as repetitions come in, at the same confidence as the 5 repetitions' min-max."""
    k = 1
    while 2 * (k + 1) <= n and \
            1 - 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n >= MEDIAN_CONFIDENCE:
        k += 1
    return k


def spread_of(xs):
    """Spread(median, lo, hi, n) of the values (None skipped): lo, hi the k-th smallest and
    largest (order_k; min and max up to 8 values); None when there are none."""
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    k = order_k(len(xs))
    return Spread(statistics.median(xs), xs[k - 1], xs[-k], len(xs))


def exact(x):
    """A number with no spread (a paper's value, a count)."""
    return None if x is None else Spread(x, x, x, 1)


def ratio(a, b):
    """a / b of two Spreads, with the interval of every ratio their ranges allow."""
    if a is None or b is None or not b.med or b.lo <= 0 or b.hi <= 0:
        return None
    return Spread(a.med / b.med, a.lo / b.hi, a.hi / b.lo, min(a.n, b.n))


def gmean_spread(ss):
    """Geometric mean of Spreads: of the medians, of the lows, of the highs."""
    ss = [s for s in ss if s is not None and s.lo > 0]
    if not ss:
        return None
    return Spread(gmean([s.med for s in ss]), gmean([s.lo for s in ss]),
                  gmean([s.hi for s in ss]), min(s.n for s in ss))


def check(s, op, threshold):
    """Does `value op threshold` hold (op: '>=', '>', '<=', '<')? True when the whole
    interval of s satisfies it, False when none of it does, None (within noise) when the
    interval reaches the threshold: a value exactly at a threshold decides nothing. A plain
    number is taken as exact. Rule: NOISE_RULE."""
    if s is None:
        return None
    if not isinstance(s, Spread):
        s = exact(s)
    if s.lo <= threshold <= s.hi:
        return None
    above = s.lo > threshold
    return above if op in (">", ">=") else not above


def check_between(s, low, high):
    """Is the value within [low, high]? True when the whole interval is inside, False when
    it lies wholly outside, None (within noise) when it reaches either bound."""
    inside_low, inside_high = check(s, ">=", low), check(s, "<=", high)
    if inside_low is False or inside_high is False:
        return False
    if inside_low is None or inside_high is None:
        return None
    return True


def differ(a, b):
    """a above b? (two Spreads): True / False / None when the ratio's interval contains 1."""
    return check(ratio(a, b), ">", 1.0)


def all_hold(*holds):
    """Several checks together: False if any fails, None (within noise) if any is within
    noise, else True."""
    if any(h is False for h in holds):
        return False
    return None if any(h is None for h in holds) else True
