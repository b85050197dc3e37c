"""Reports: each renders a whole Outcome to a string. REPORTERS is the one list of formats."""

from __future__ import annotations

from collections.abc import Callable

from upgrade_guard.findings import Outcome
from upgrade_guard.report import github, json_report, markdown, text

Reporter = Callable[[Outcome], str]

REPORTERS: dict[str, Reporter] = {
    "text": text.render_plain,
    "json": json_report.render,
    "markdown": markdown.render,
    "github": github.render,
}
