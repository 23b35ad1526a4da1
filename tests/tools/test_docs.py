"""docs/experiments.md covers every shipped sweep, each with its command and the parts a
student needs."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_every_shipped_sweep_is_an_experiment():
    text = open(os.path.join(ROOT, "docs", "experiments.md")).read()
    sections = dict(re.findall(r"^## (\S+) — .*?\n(.*?)(?=^## |\Z)", text, re.M | re.S))
    sweeps = sorted(f[:-4] for f in os.listdir(os.path.join(ROOT, "configs", "sweeps"))
                    if f.endswith(".ini"))
    assert sorted(sections) == sweeps
    for name, body in sections.items():
        for part in ("**Question.**", "**Command.**", "**Read.**", "**Try.**"):
            assert part in body, "%s: no %s" % (name, part)
        assert "configs/sweeps/%s.ini" % name in body or name == "taxonomy", name
