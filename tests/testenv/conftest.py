"""Plain unit tests of tools/testenv's pure parts (no cluster, no binaries)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
