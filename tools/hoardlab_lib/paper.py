"""What the papers claim, as static data, printed beside the measurements. Nothing here
feeds a verdict: verdicts come from measured numbers only (verdicts/).

Sources (../shared/papers/): Hoard, ASPLOS 2000 (Tables 3-7); the uC++/Hoard hybrid report
(padding experiment); Michael, PLDI 2004 (lock-free allocator); Hoard PR 88 (2026)."""

# Hoard Table 7: the category each hoardlab strategy implements, and the category's row.
# A claim is the set of answers the paper gives for that category: the "private heaps with
# ownership" category lists three allocators that differ (MTmalloc not scalable, LKmalloc
# avoids false sharing), so either answer agrees with the paper there.
TABLE7 = {
    "serial": {"category": "serial single heap",
               "fast": {"yes"}, "scalable": {"no"}, "false_sharing": {"no"}, "blowup": {"O(1)"}},
    "concurrent": {"category": "concurrent single heap",
                   "fast": {"no"}, "scalable": {"maybe"}, "false_sharing": {"no"},
                   "blowup": {"O(1)"}},
    "private": {"category": "pure private heaps",
                "fast": {"yes"}, "scalable": {"yes"}, "false_sharing": {"no"},
                "blowup": {"unbounded"}},
    "ownership": {"category": "private heaps with ownership (Ptmalloc, MTmalloc, LKmalloc)",
                  "fast": {"yes"}, "scalable": {"yes", "no"}, "false_sharing": {"no", "yes"},
                  "blowup": {"O(P)"}},
    "hoard": {"category": "Hoard",
              "fast": {"yes"}, "scalable": {"yes"}, "false_sharing": {"yes"},
              "blowup": {"O(1)"}},
}
# Not in Table 7; the claim its own paper makes (Michael 2004: low latency, scalable,
# avoids false sharing, constant blowup).
OTHER_CLAIMS = {
    "lockfree": {"category": "lock-free (Michael 2004, not in Hoard's Table 7)",
                 "fast": {"yes"}, "scalable": {"yes"}, "false_sharing": {"yes"},
                 "blowup": {"O(1)"}},
    # Hoard with the 2026 optimizations (PR 88): the PR claims speed and scaling and that its
    # changes (TLAB, sharded global heap, cpu heap selection) keep Hoard's blowup bound; it
    # says nothing about false sharing (None: no claim, never a mismatch).
    "hoard2026": {"category": "Hoard 2026 (PR 88, not in Table 7)",
                  "fast": {"yes"}, "scalable": {"yes"}, "false_sharing": None,
                  "blowup": {"O(1)"}},
    # Hoard as of July 2026 (PRs 89-123): the same claims, and #103 says routing foreign frees
    # to their home heap removed the false sharing larson's hand-offs caused.
    "hoard202607": {"category": "Hoard July 2026 (PRs 89-123, not in Table 7)",
                    "fast": {"yes"}, "scalable": {"yes"}, "false_sharing": {"yes"},
                    "blowup": {"O(1)"}},
}


def claim(strategy):
    return TABLE7.get(strategy) or OTHER_CLAIMS.get(strategy)


def claim_text(values):
    if not values:
        return "no claim"
    order = ["yes", "maybe", "no", "O(1)", "O(P)", "unbounded"]
    return " or ".join(sorted(values, key=lambda v: order.index(v) if v in order else 99))


# Hoard Table 3: falsely-shared objects found for Hoard on 14 processors.
TABLE3_HOARD = {"threadtest": 0, "shbench": 0, "larson": 0}

# Hoard Table 4: Hoard's fragmentation A/U on 14 processors.
TABLE4_HOARD = {"threadtest": 1.24, "shbench": 3.17, "larson": 1.22}

# Hoard Tables 5 and 6: empty fraction f = 1/8, 1/4, 1/2 on 14 processors.
# Table 5: runtime in seconds (larson: memory operations per second).
TABLE5 = {"threadtest": (1.27, 1.28, 1.19), "shbench": (1.45, 1.50, 1.44),
          "larson": (4407654, 4416303, 4352163)}
TABLE6 = {"threadtest": (1.22, 1.24, 1.22), "shbench": (3.17, 3.17, 3.16),
          "larson": (1.22, 1.22, 1.61)}
F_VALUES = ("1/8", "1/4", "1/2")      # the f of each column of TABLE5 and TABLE6
