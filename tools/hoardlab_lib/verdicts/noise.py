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


def verdict(value, evidence, note=""):
    """A verdict: its value, the evidence it was decided on, a note."""
    return {"value": value, "evidence": evidence, "note": note}


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
              "that more repetitions can narrow it; of a ratio of two medians a/b, the k-th smallest to "
              "the k-th largest of the ratios of every repetition of a to every repetition of b "
              "(the interval of the rank-sum test, at the same 1/16: every ratio up to 3 "
              "repetitions a side, all but the 3 most extreme each side at 5 and 5); of a "
              "geometric mean over K workloads, the mean of the logarithms of the medians "
              "plus and minus the root of the summed squares of each end's distance from its "
              "median, divided by K (independent errors add as squares). A group measured "
              "once has no interval (its cell says ±?)." % WITHIN_NOISE)


class Spread(tuple):
    """A median over repetitions and the interval [lo, hi] around it (min-max, or the
    interval of a ratio), from n repetitions (n = 1: no spread known). A Spread made by
    spread_of also keeps its repetitions, sorted (`xs`), from which ratio() takes a
    ratio's interval; any other Spread has xs = None."""
    xs = None

    def __new__(cls, med, lo, hi, n, xs=None):
        s = tuple.__new__(cls, (med, lo, hi, n))
        if xs is not None:
            s.xs = xs
        return s

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
    is within noise (sweeps/undecided.py) could never decide it; this interval narrows
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
    return Spread(statistics.median(xs), xs[k - 1], xs[-k], len(xs), tuple(xs))


def exact(x):
    """A number with no spread (a paper's value, a count)."""
    return None if x is None else Spread(x, x, x, 1)


@functools.lru_cache(maxsize=None)
def rank_sum_k(n, m):
    """The largest k such that [k-th smallest, k-th largest] of the n*m ratios x_i / y_j
    of two groups holds their true ratio with at least MEDIAN_CONFIDENCE: the
    distribution-free interval that goes with the Mann-Whitney (rank-sum) test (Hodges and
    Lehmann's, for a shift of the logarithms). Its coverage is 1 - 2 P(U < k), U the
    Mann-Whitney count of n and m repetitions under no difference. 1 (every ratio: min a /
    max b to max a / min b) when even that falls short of the confidence (e.g. 3 and 3
    repetitions: 9/10)."""
    u_dist = _u_counts(n, m)
    total = math.comb(n + m, n)
    k, below = 1, u_dist[0]
    while 2 * k <= n * m and 1 - 2 * (below + u_dist[k]) / total >= MEDIAN_CONFIDENCE:
        below += u_dist[k]
        k += 1
    return k


@functools.lru_cache(maxsize=None)
def _u_counts(n, m):
    """[number of orderings of n and m repetitions with Mann-Whitney U = u, u = 0..n*m]."""
    if n == 0 or m == 0:
        return (1,)
    a, b = _u_counts(n - 1, m), _u_counts(n, m - 1)
    return tuple((a[u - m] if 0 <= u - m < len(a) else 0) + (b[u] if u < len(b) else 0)
                 for u in range(n * m + 1))


def ratio(a, b):
    """a / b of two Spreads: the ratio of the medians, and its interval. When both keep
    their repetitions (spread_of), the interval is [k-th smallest, k-th largest] of every
    ratio of a repetition of a to a repetition of b (rank_sum_k: the chance it misses the
    true ratio at most 1/16, as a median's); otherwise the widest [a.lo / b.hi, a.hi / b.lo]."""
    if a is None or b is None or not b.med or b.lo <= 0 or b.hi <= 0:
        return None
    med = a.med / b.med
    if a.xs and b.xs and len(a.xs) > 1 and len(b.xs) > 1 and a.xs[0] >= 0:
        rs = sorted(x / y for x in a.xs for y in b.xs)
        k = rank_sum_k(len(a.xs), len(b.xs))
        return Spread(med, min(rs[k - 1], med), max(rs[-k], med), min(a.n, b.n))
    return Spread(med, a.lo / b.hi, a.hi / b.lo, min(a.n, b.n))


def gmean_spread(ss):
    """Geometric mean of Spreads (of independent groups: one per workload) and its
    interval: each end lies, in logarithms, sqrt(sum d_i^2) / K from the mean of the K
    medians' logarithms, d_i the distance of the i-th Spread's end from its median — the
    errors of independent measurements add as squares. The geometric mean of the ends
    (what this was) assumes every workload's worst case at once: on this testbed's own runs
    (4 workloads, each group split at random into two halves of 3: no true difference) it
    never missed 1 in 300 tries, where 1 in 16 is the level meant; this missed 1 in 15."""
    ss = [s for s in ss if s is not None and s.lo > 0]
    if not ss:
        return None
    k = len(ss)
    mid = sum(math.log(s.med) for s in ss) / k
    down = math.sqrt(sum(math.log(s.med / s.lo) ** 2 for s in ss)) / k
    up = math.sqrt(sum(math.log(s.hi / s.med) ** 2 for s in ss)) / k
    return Spread(math.exp(mid), math.exp(mid - down), math.exp(mid + up),
                  min(s.n for s in ss))


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


def check_claim(s, op, claim):
    """check() of a claimed effect: a ratio that a paper or the design says is at least (or
    at most) `claim`, beyond 1 on the side claimed. Also None (within noise) where the
    interval contains 1: a measurement that cannot tell its ratio from 1 has shown no effect
    either way, and calling the claim contradicted by it would read the noise (a busy
    machine's, most often) as evidence against it."""
    held = check(s, op, claim)
    beyond = claim > 1 if op in (">", ">=") else claim < 1
    if held is False and beyond and check(s, ">", 1.0) is None:
        return None
    return held


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
