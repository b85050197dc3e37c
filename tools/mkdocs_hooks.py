"""mkdocs hook: the site's home page is the README, so the two cannot drift apart. The
README links into docs/ as GitHub shows it; on the site those pages sit beside the home page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parents[1] / "README.md"


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if page.file.src_uri != "index.md":
        return markdown
    return README.read_text().replace("](docs/", "](")
