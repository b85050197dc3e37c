"""The stamper: exact text in, exact text out; and the stamp command as a user runs it."""

from __future__ import annotations

import os
import stat

import pytest
from history_kit import GitRepo, widget

from upgrade_guard.write.stamper import StampError, read_annotations, stamp_text

V = "upgrade-guard.io/crd-schema-version"
D = "upgrade-guard.io/crd-schema-digest"
DIGEST = "sha256:" + "ab" * 32
WANTED = {"x.io": {V: "3", D: DIGEST}}
HEAD = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"

CASES = {
    "annotations created at the file's indentation": (
        HEAD + "metadata:\n    name: x.io # keep me\n    labels: {a: b}\nspec: {}\n",
        HEAD + "metadata:\n    annotations:\n"
        f'        {V}: "3"\n        {D}: "{DIGEST}"\n'
        "    name: x.io # keep me\n    labels: {a: b}\nspec: {}\n",
    ),
    "entries go before the first existing annotation; quotes kept on change": (
        HEAD + "metadata:\n  annotations:\n    # a comment\n    'other': \"v\"\n"
        f"    {V}: '2'\n  name: x.io\n",
        HEAD + "metadata:\n  annotations:\n    # a comment\n"
        f'    {D}: "{DIGEST}"\n'
        "    'other': \"v\"\n"
        f"    {V}: '3'\n  name: x.io\n",
    ),
    "a number is rewritten as a string": (
        HEAD + f'metadata:\n  annotations:\n    {V}: 3\n    {D}: "{DIGEST}"\n  name: x.io\n',
        HEAD + f'metadata:\n  annotations:\n    {V}: "3"\n    {D}: "{DIGEST}"\n  name: x.io\n',
    ),
    "null annotations keep their comment": (
        HEAD + "metadata:\n  annotations: ~ # none yet\n  name: x.io\n",
        HEAD + "metadata:\n  annotations: # none yet\n"
        f'    {V}: "3"\n    {D}: "{DIGEST}"\n  name: x.io\n',
    ),
    "empty annotations at the end of a file without a newline": (
        HEAD + "metadata:\n  name: x.io\n  annotations:",
        HEAD + f'metadata:\n  name: x.io\n  annotations:\n    {V}: "3"\n    {D}: "{DIGEST}"\n',
    ),
    "JSON stays JSON": (
        '{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",\n'
        ' "metadata": {\n   "name": "x.io"\n }}\n',
        '{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",\n'
        ' "metadata": {\n'
        f'   "annotations": {{"{V}": "3", "{D}": "{DIGEST}"}},\n'
        '   "name": "x.io"\n }}\n',
    ),
    "empty flow annotations": (
        HEAD + "metadata: {name: x.io, annotations: {}}\n",
        HEAD + f'metadata: {{name: x.io, annotations: {{"{V}": "3", "{D}": "{DIGEST}"}}}}\n',
    ),
    "CRLF line endings": (
        HEAD.replace("\n", "\r\n") + "metadata:\r\n  name: x.io\r\n",
        HEAD.replace("\n", "\r\n")
        + f'metadata:\r\n  annotations:\r\n    {V}: "3"\r\n    {D}: "{DIGEST}"\r\n'
        "  name: x.io\r\n",
    ),
    "other documents and a ConfigMap of the same name are untouched": (
        "# head\n---\nkind: ConfigMap\nmetadata: {name: x.io}\n---\n"
        + HEAD
        + "metadata:\n  name: x.io\n...\n---\nplain: doc\n",
        "# head\n---\nkind: ConfigMap\nmetadata: {name: x.io}\n---\n"
        + HEAD
        + f'metadata:\n  annotations:\n    {V}: "3"\n    {D}: "{DIGEST}"\n  name: x.io\n'
        "...\n---\nplain: doc\n",
    ),
    "byte order mark and a directive": (
        "\ufeff%YAML 1.1\n---\n" + HEAD + "metadata:\n  name: x.io\n",
        "\ufeff%YAML 1.1\n---\n"
        + HEAD
        + f'metadata:\n  annotations:\n    {V}: "3"\n    {D}: "{DIGEST}"\n  name: x.io\n',
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_stamp_text(case: str) -> None:
    before, after = CASES[case]
    assert stamp_text(before, WANTED) == after
    assert stamp_text(after, WANTED) == after
    assert read_annotations(after)["x.io"][V] == "3"


REFUSED = {
    "block scalar value": HEAD + f"metadata:\n  annotations:\n    {V}: |\n      2\n  name: x.io\n",
    "anchored metadata": HEAD + "metadata: &m\n  name: x.io\n",
    "CRD inside a List": "kind: List\nitems:\n- "
    + HEAD.replace("\n", "\n  ")
    + "metadata:\n    name: x.io\n",
    "annotations not a mapping": HEAD + "metadata:\n  annotations: [a]\n  name: x.io\n",
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_stamp_will_not_edit(case: str) -> None:
    with pytest.raises(StampError):
        stamp_text(REFUSED[case], WANTED)


# ------------------------------------------------------------------ the command


@pytest.mark.parametrize("value", ["0", "01", "+1", "-1", "1.0", "1e3", "one", " 1"])
def test_non_canonical_numbers_are_refused(repo: GitRepo, value: str) -> None:
    repo.write_crd(widget())
    for args in (["--schema-version", value], ["--schema-version", "1", "--counter", f"s={value}"]):
        done = repo.ug("stamp", "crds", *args)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "canonical" in done.stderr and "Traceback" not in done.stderr
    assert "upgrade-guard.io" not in (repo.root / "crds" / "widgets.example.com.yaml").read_text()


def test_stamp_then_check(repo: GitRepo) -> None:
    path = repo.write_crd(widget())
    os.chmod(path, 0o640)
    repo.stamp(1)
    text = path.read_text()
    assert 'upgrade-guard.io/crd-schema-version: "1"' in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert repo.ug("stamp", "crds", "--check").returncode == 0
    assert repo.ug("stamp", "crds", "--check", "--schema-version", "1").returncode == 0
    # A spec edit leaves the digest stale: --check says so and changes nothing.
    path.write_text(text.replace("type: string", "type: integer"))
    edited = path.read_bytes()
    done = repo.ug("stamp", "crds", "--check")
    assert done.returncode == 1
    assert "widgets.example.com" in done.stdout and "crd-schema-digest" in done.stdout
    assert path.read_bytes() == edited
    # Asking for another version is also "not stamped as it would be".
    repo.stamp()
    assert repo.ug("stamp", "crds", "--check", "--schema-version", "2").returncode == 1


def test_stamp_keeps_the_stamped_version_and_needs_one(repo: GitRepo) -> None:
    repo.write_crd(widget())
    done = repo.ug("stamp", "crds")
    assert done.returncode == 2 and "--schema-version" in done.stderr
    repo.stamp(4, "--counter", "controller-state-version=2")
    repo.stamp()
    text = (repo.root / "crds" / "widgets.example.com.yaml").read_text()
    assert 'crd-schema-version: "4"' in text
    assert 'controller-state-version: "2"' in text


def test_stamp_needs_crds(repo: GitRepo) -> None:
    repo.write("crds/notes.yaml", "kind: ConfigMap\n")
    done = repo.ug("stamp", "crds", "--schema-version", "1")
    assert done.returncode == 2 and "no CustomResourceDefinitions" in done.stderr
    done = repo.ug("stamp", "missing", "--schema-version", "1")
    assert done.returncode == 2 and "no such file" in done.stderr


def test_a_malformed_counter_option_is_refused(repo: GitRepo) -> None:
    repo.write_crd(widget())
    for bad in ("state", "=1", "crd-schema-version=2", "a b=1"):
        done = repo.ug("stamp", "crds", "--schema-version", "1", "--counter", bad)
        assert done.returncode == 2, bad


def test_stamp_reads_as_diff_reads(repo: GitRepo) -> None:
    """One reader for every command: the same byte limit, and standard input refused."""
    repo.write_crd(widget())
    done = repo.ug("stamp", "crds", "--schema-version", "1", "--max-bytes", "10")
    assert done.returncode == 2 and "larger than the limit" in done.stderr
    done = repo.ug("stamp", "-", "--schema-version", "1")
    assert done.returncode == 2 and "not -" in done.stderr


# A CRD as charts template them (external-secrets' templates/crds/): actions alone on their
# lines, a block of them inside metadata.annotations, one within a value, a comment holding
# "}}". Not YAML as it is; stamp reads it with the actions blanked out.
TEMPLATED_CRD = """\
{{- if .Values.installCRDs }}
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  annotations:
    {{- with .Values.crds.annotations }}
    {{- toYaml . | nindent 4}}
    {{- end }}
    {{- /* injected only with cert-manager: {{ if }} ... }} */}}
    {{- if .Values.webhook.certManager.enabled }}
    cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/{{ include "x.fullname" . }}-webhook
    {{- end }}
    controller-gen.kubebuilder.io/version: v0.17.3
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
{{- end }}
"""
DEPLOYMENT_TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
spec:
  replicas: {{ .Values.replicas }}
  {{- with .Values.affinity }}
  affinity: {{- toYaml . | nindent 8 }}
  {{- end }}
  template: {{ include "pod" . }}
    metadata: {}
"""


def test_stamp_reads_a_helm_templated_crd(repo: GitRepo) -> None:
    """Issue 34 §7: a chart's CRD template is stamped byte for byte (two lines added, above
    the conditionals the first annotations sit in), and reads as stamped; a Deployment's
    template beside it, unreadable even blanked, holds nothing to stamp."""
    path = repo.write("crds/widgets.yaml", TEMPLATED_CRD)
    repo.write("crds/deployment.yaml", DEPLOYMENT_TEMPLATE)
    done = repo.ug("stamp", "crds", "--schema-version", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    text = path.read_text()
    added = [line for line in text.splitlines() if line not in TEMPLATED_CRD.splitlines()]
    assert added == [
        '    upgrade-guard.io/crd-schema-version: "3"',
        added[1],  # the digest
    ] and added[1].startswith('    upgrade-guard.io/crd-schema-digest: "sha256:')
    assert text.replace("\n".join(added) + "\n", "") == TEMPLATED_CRD
    assert text.index(added[0]) < text.index("{{- with .Values.crds.annotations }}")
    assert (
        read_annotations(text, template=True)["widgets.example.com"][
            "upgrade-guard.io/crd-schema-version"
        ]
        == "3"
    )
    assert repo.ug("stamp", "crds", "--check").returncode == 0


def test_a_templated_crd_stamp_cannot_read_is_refused_with_its_place(repo: GitRepo) -> None:
    broken = TEMPLATED_CRD.replace("  scope: Namespaced", "  scope: [Namespaced")
    repo.write("crds/widgets.yaml", broken)
    done = repo.ug("stamp", "crds", "--schema-version", "1")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "crds/widgets.yaml: line" in done.stderr and "read as a Helm template" in done.stderr
