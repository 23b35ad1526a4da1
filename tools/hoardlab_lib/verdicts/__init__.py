"""The taxonomy verdicts, decided from measured rows only (tidy rows as read from
runs.csv / rounds.csv). Every rule is a named function whose docstring states it; the
report prints the same text (RULES). Thresholds are constants here, chosen before looking
at any measurement and never adjusted per strategy.

Verdict values: fast/scalable/false sharing: yes, maybe (scalable only), no;
blowup: O(1), O(P), unbounded; and 'undecided' (with the reason) when the data cannot
decide — too few cores, a workload not measured, runs that failed.

The package's one face (the rest imports `verdicts as V`): noise.py, the numbers (a median
with its spread, checks); groups.py, the rows selected and grouped, thread counts; rules.py,
the rules and the taxonomy; blowup.py, the blowup rule; today.py, today's allocators judged
from outside them (today_verdicts, relabel)."""
from .blowup import *  # noqa: F401,F403
from .groups import *  # noqa: F401,F403
from .noise import *  # noqa: F401,F403
from .rules import *  # noqa: F401,F403
from .today import *  # noqa: F401,F403
