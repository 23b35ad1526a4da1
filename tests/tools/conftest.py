import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tools"))

import pytest  # noqa: E402  (after sys.path, as the tests' own imports)

BDIR = os.path.abspath(os.environ.get("HOARDLAB_BUILD_DIR") or os.path.join(REPO, "build"))


def needs_built(*paths):
    """Skip the test unless these build outputs (relative to BDIR) exist, naming them."""
    names = "/".join(os.path.basename(p).split(".")[0] + (".so" if p.endswith(".so") else "")
                     for p in paths)
    return pytest.mark.skipif(
        not all(os.path.exists(os.path.join(BDIR, p)) for p in paths),
        reason="%s not built in %s (run tools/hoardlab build)" % (names, BDIR))
