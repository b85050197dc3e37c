"""Every file of ../shared/corpus is read exactly as Kubernetes reads it.

Kubernetes' reading comes from helm's ``fromYaml`` (sigs.k8s.io/yaml over go-yaml v2; see
helm_oracle), one scratch chart per tag; ours from ``load_documents`` on the tag's
directory, as the CLI loads it. Every project is covered in full, provider-upjet-aws (150 MB)
included: about a minute on 2 cores. A second test holds the fast (rapidyaml) path to the
faithful (libyaml) one file by file, without helm.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helm_oracle import HelmError, first_difference, read_with_helm, require_helm

from corpus import CORPUS, projects, require_corpus, tags
from upgrade_guard.load import yaml_reader, yaml_scalars
from upgrade_guard.load.documents import load_documents
from upgrade_guard.load.fast_yaml import read_fast

PROJECTS = projects() or ["(corpus absent)"]


def _tag_dirs(project: str) -> list[str]:
    require_corpus()
    return [str(CORPUS / project / tag) for tag in tags(project)]


@pytest.mark.cluster
@pytest.mark.parametrize("project", PROJECTS)
def test_corpus_reads_as_kubernetes_reads_it(project: str) -> None:
    directories = _tag_dirs(project)
    helm = require_helm()
    wrong: list[str] = []
    files = 0
    for directory in directories:
        ours: dict[str, object] = {}
        for document in load_documents(directory):
            assert document.source.document == 0, f"{document.source}: one document per file"
            ours[document.source.file] = document.body
        theirs = read_with_helm(helm, {name: Path(name) for name in ours})
        for name, body in ours.items():
            files += 1
            expected = theirs[name]
            if isinstance(expected, HelmError):
                wrong.append(f"{name}: Kubernetes refuses it ({expected}), we read it")
            elif difference := first_difference(body, expected):
                wrong.append(f"{name}: {difference}")
    assert files > 0
    assert not wrong, f"{len(wrong)} of {files} files read differently:\n" + "\n".join(wrong[:20])


@pytest.mark.parametrize("project", PROJECTS)
def test_fast_path_reads_corpus_as_faithful_path(project: str) -> None:
    taken = 0
    for directory in _tag_dirs(project):
        for path in sorted(Path(directory).rglob("*.yaml")):
            data = path.read_bytes()
            fast = read_fast(data, yaml_scalars.MAX_DEPTH, yaml_scalars.plain_differs)
            if fast is None:
                continue
            taken += 1
            faithful = list(yaml_reader.read_documents_faithful(data))
            assert [line for line, _ in fast] == [line for line, _ in faithful], path
            for (_, a), (_, b) in zip(fast, faithful, strict=True):
                assert first_difference(a, b) is None, f"{path}: {first_difference(a, b)}"
    assert taken > 0, "the fast path took no file of the corpus"
