"""tools/testenv on the path: test_clean_install.py runs the image as tests/cluster do, and
finds helm where tools/kube-testenv/build.sh put it."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
