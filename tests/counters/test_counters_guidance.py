"""Counters that guide: every hint names the exact next command, stamp --bump computes the
version verify-history wants, unstamped and regenerated sets are reported once, and stamp
keeps its annotations out of Helm conditionals."""

from __future__ import annotations

import re
import shlex

import pytest
import yaml
from history_kit import GitRepo, codes, gadget, widget

from crd_builders import NOT_COMPILING_RULE
from upgrade_guard.write import stamper

CHANGED = {"size": {"type": "string"}, "color": {"type": "string"}}  # safe, but a change


def run_hint(repo: GitRepo, output: str) -> str:
    """The command in backquotes that output tells the user to run, run as given."""
    command = output.split("run `", 1)[1].split("`", 1)[0]
    program, *args = shlex.split(command)
    assert program == "upgrade-guard"
    done = repo.ug(*args)
    assert done.returncode == 0, done.stdout + done.stderr
    return command


def test_stamp_check_after_a_spec_change_names_bump_and_bump_satisfies_history(
    repo: GitRepo,
) -> None:
    repo.release(widget(), schema_version=3)
    repo.write_crd(widget(**CHANGED))
    check = repo.ug("stamp", "--check", "crds")
    assert check.returncode == 1
    assert run_hint(repo, check.stdout) == "upgrade-guard stamp crds --bump"
    code, report = repo.verify()
    assert code == 0, report["findings"]
    assert report["history"]["schema"]["candidate_version"] == 4


def test_bump_keeps_the_version_when_nothing_changed(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=3)
    repo.write("crds/notes.txt", "unrelated\n")
    done = repo.ug("stamp", "crds", "--bump")
    assert done.returncode == 0
    assert "schema version 3: the schema is unchanged since the baseline's 3" in done.stdout


def test_bump_on_a_first_adoption_is_1_and_after_it_the_next(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=None)
    done = repo.ug("stamp", "crds", "--bump")
    assert "schema version 1: first adoption" in done.stdout
    assert repo.verify()[0] == 0
    repo.commit()
    repo.write_crd(gadget())  # a new, unstamped CRD beside stamped ones
    assert "schema version 2: the schema changed" in repo.ug("stamp", "crds", "--bump").stdout
    assert repo.verify()[0] == 0


def test_bump_and_an_explicit_version_exclude_each_other(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=1)
    done = repo.ug("stamp", "crds", "--bump", "--schema-version", "2")
    assert done.returncode == 2


@pytest.mark.parametrize("baseline_version", [None, 2], ids=["first-adoption", "history"])
def test_unstamped_files_point_to_bump_and_check_exits_1(
    repo: GitRepo, baseline_version: int | None
) -> None:
    repo.release(widget(), schema_version=baseline_version)
    repo.write_crd(gadget())
    check = repo.ug("stamp", "--check", "crds")
    assert check.returncode == 1, check.stderr
    assert "crds/gadgets.example.com.yaml: CRD gadgets.example.com: no schema version" in (
        check.stdout
    )
    stamp = repo.ug("stamp", "crds")
    assert stamp.returncode == 2
    assert "run `upgrade-guard stamp crds --bump`" in stamp.stderr
    assert "1 for a first adoption" not in stamp.stderr
    run_hint(repo, check.stdout)
    assert repo.verify()[0] == 0


def test_a_regenerated_set_is_one_finding_with_the_fixing_command(repo: GitRepo) -> None:
    repo.release(widget(), gadget(), schema_version=4)
    for body in (widget(**CHANGED), gadget()):  # a generator rewrites every file
        name = body["metadata"]["name"]
        repo.write(f"crds/{name}.yaml", yaml.safe_dump(body, sort_keys=False))
    code, report = repo.verify()
    assert code == 1
    own = [f for f in report["findings"] if f["code"].startswith("UG7")]
    assert len(own) == 1 and own[0]["code"] == "UG701"
    assert "none of the 2 CRDs carries" in own[0]["message"]
    assert "sha256:" not in own[0]["message"]
    run_hint(repo, own[0]["message"])
    code, report = repo.verify()
    assert code == 0 and report["history"]["schema"]["candidate_version"] == 5


@pytest.mark.parametrize(
    ("stamped", "command"),
    [
        (3, "upgrade-guard stamp crds --schema-version 4"),  # changed, not raised
    ],
)
def test_history_refusals_name_the_exact_command(repo: GitRepo, stamped: int, command: str) -> None:
    repo.release(widget(), schema_version=3)
    repo.write_crd(widget(**CHANGED))
    repo.stamp(stamped)
    code, report = repo.verify()
    assert code == 1 and codes(report) == {"UG704"}
    message = next(f["message"] for f in report["findings"] if f["code"] == "UG704")
    assert run_hint(repo, message) == command
    assert repo.verify()[0] == 0


def test_a_bumped_unchanged_schema_names_the_command_that_restores_it(repo: GitRepo) -> None:
    repo.release(widget(), schema_version=3)
    repo.stamp(5)
    report = repo.verify()[1]
    message = next(f["message"] for f in report["findings"] if f["code"] == "UG705")
    assert run_hint(repo, message) == "upgrade-guard stamp crds --schema-version 3"


CERT_MANAGER_STYLE = """\
# START crd {{- if .Values.crds.enabled }}
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  # START annotations {{- if .Values.crds.keep }}
  annotations:
    helm.sh/resource-policy: keep
  # END annotations {{- end }}
  labels:
    app: widgets
spec: {}
# END crd {{- end }}
"""

GUARDED_ENTRIES = """\
# START crd {{- if .Values.crds.enabled }}
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  annotations:
    # START keep {{- if .Values.crds.keep }}
    helm.sh/resource-policy: keep
    # END keep {{- end }}
spec: {}
# END crd {{- end }}
"""

WANTED = {"widgets.example.com": {"upgrade-guard.io/crd-schema-version": "1"}}


def test_stamp_refuses_annotations_that_only_some_renders_have() -> None:
    with pytest.raises(stamper.StampError) as raised:
        stamper.stamp_text(CERT_MANAGER_STYLE, WANTED, "crds.yaml")
    message = str(raised.value)
    assert "inside the Helm conditional {{- if .Values.crds.keep }} (line 6)" in message
    assert "move the conditional inside metadata.annotations" in message


def test_stamp_goes_above_a_conditional_inside_annotations() -> None:
    stamped = stamper.stamp_text(GUARDED_ENTRIES, WANTED, "crds.yaml")
    assert stamped == GUARDED_ENTRIES.replace(
        "  annotations:\n",
        '  annotations:\n    upgrade-guard.io/crd-schema-version: "1"\n',
    )


def test_verify_history_github_annotations_point_into_the_work_tree(repo: GitRepo) -> None:
    repo.release(widget(size={"type": "string", "enum": ["s", "m"]}), schema_version=1)
    repo.write_crd(widget(size={"type": "string", "enum": ["s"]}))
    repo.stamp(2)
    done = repo.ug("verify-history", "crds", "--output", "github")
    assert done.returncode == 1
    annotation = next(line for line in done.stdout.splitlines() if "UG207" in line)
    text = (repo.root / "crds" / "widgets.example.com.yaml").read_text().splitlines()
    match = re.match(r"::error file=crds/widgets\.example\.com\.yaml,line=(\d+),", annotation)
    assert match, annotation
    assert text[int(match.group(1)) - 1].strip() == "size:"


def test_bump_reads_the_baseline_as_released(repo: GitRepo) -> None:
    """The baseline's rules are not compiled: an apiserver took them when it was released."""
    repo.release(widget(size=NOT_COMPILING_RULE), schema_version=None)
    repo.write_crd(widget())
    done = repo.ug("stamp", "crds", "--bump")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "schema version 1: first adoption" in done.stdout
