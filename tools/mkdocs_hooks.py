"""mkdocs hooks. The site's home page is the README, so the two cannot drift apart: the
README links into docs/ as GitHub shows it; on the site those pages sit beside the home page.
The published JSON Schemas are served from the program's own, as schemas/NAME.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

from upgrade_guard.policy import POLICY_SCHEMA
from upgrade_guard.report.report_schema import REPORT_SCHEMA

README = Path(__file__).resolve().parents[1] / "README.md"
SCHEMAS = {"policy": POLICY_SCHEMA, "report": REPORT_SCHEMA}


def on_files(files: Files, config: Any, **_: Any) -> Files:
    for name, schema in SCHEMAS.items():
        content = json.dumps(schema, indent=2) + "\n"
        files.append(File.generated(config, f"schemas/{name}.json", content=content))
    return files


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if page.file.src_uri != "index.md":
        return markdown
    return README.read_text().replace("](docs/", "](")
