"""A Helm template file read as the YAML around its actions, for the tools that edit chart
sources in place (``stamp``) rather than judge what Helm renders.

A chart's CRD template (cert-manager's and external-secrets' charts, ``templates/crds/``)
is no YAML: ``{{- if .Values.installCRDs }}`` alone on a line starts a flow mapping. Each
action ``{{ ... }}`` is blanked out, every offset and line kept, so positions found in the
blanked text are positions in the file: an action alone on its line (besides other
actions) becomes a comment, one within other text a run of ``x`` (``{{ .Release.Namespace
}}/x-webhook`` reads as a string of the same length). Both branches of a conditional are
read, as the file holds them. A file that reads as YAML as it is (templates inside quoted
values or comments, as in the corpus' cert-manager CRDs) is read as it is: only what cannot
be read otherwise is blanked.
"""

from __future__ import annotations

import re

# A comment (which may hold "}}") or any other action.
_ACTION = re.compile(r"\{\{-?\s*/\*.*?\*/\s*-?\}\}|\{\{.*?\}\}", re.DOTALL)


def is_template(text: str) -> bool:
    return _ACTION.search(text) is not None


def blanked(text: str) -> str:
    """text with each Helm template action blanked out, its offsets and line breaks kept."""
    characters = list(text)
    for action in _ACTION.finditer(text):
        start, end = action.span()
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        line = text[line_start : len(text) if line_end < 0 else line_end]
        alone = not _ACTION.sub("", line).strip()
        for index in range(start, end):
            if characters[index] not in "\r\n":
                characters[index] = " " if alone else "x"
        if alone:
            characters[start] = "#"
    return "".join(characters)
