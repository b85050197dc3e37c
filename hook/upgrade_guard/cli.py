"""The command line: parse options, call the parts, turn the outcome into an exit code."""

from __future__ import annotations

import enum
import os
import re
import sys
from collections.abc import Callable
from functools import wraps
from typing import Annotated, Any, NoReturn, ParamSpec, TypeVar

import typer

from upgrade_guard import engine, rules
from upgrade_guard.counters import history
from upgrade_guard.crd import Crd
from upgrade_guard.findings import ExitCode
from upgrade_guard.load.crds import crds_from
from upgrade_guard.load.documents import DEFAULT_MAX_BYTES, LoadError, load_documents
from upgrade_guard.load.policy_file import read_policy
from upgrade_guard.policy import DEFAULT_POLICY, Policy, PolicyError
from upgrade_guard.report import REPORTERS, text

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Refuse Kubernetes operator upgrades that would hurt objects already stored.",
)

P = ParamSpec("P")
R = TypeVar("R")


class Output(enum.StrEnum):
    text = "text"
    json = "json"
    markdown = "markdown"
    github = "github"


class UsageProblem(ValueError):
    """An option value the command cannot use."""


def _fail(code: ExitCode, message: str) -> NoReturn:
    typer.echo(f"upgrade-guard: error: {message}", err=True)
    raise typer.Exit(int(code))


def guarded(command: Callable[P, R]) -> Callable[P, R]:
    """Turn known input problems into one line and exit 2; anything else into exit 4."""

    @wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except (LoadError, PolicyError, UsageProblem) as error:
            _fail(ExitCode.BAD_INPUT, str(error))
        except (typer.Exit, typer.Abort, KeyboardInterrupt):
            raise
        except Exception as error:  # fail closed, but say it is our fault
            if os.environ.get("UPGRADE_GUARD_DEBUG"):
                raise
            _fail(
                ExitCode.INTERNAL_ERROR,
                f"internal error: {type(error).__name__}: {error}"
                " (set UPGRADE_GUARD_DEBUG=1 for the traceback)",
            )

    return run


def parse_kube_version(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?", value.strip())
    if match is None:
        raise UsageProblem(f"--kube-version {value!r}: expected MAJOR.MINOR, such as 1.31")
    return int(match.group(1)), int(match.group(2))


def load_crd_set(argument: str, max_bytes: int) -> dict[str, Crd]:
    return crds_from(load_documents(argument, max_bytes))


def report(outcome: Any, output: Output) -> None:
    if output is Output.text:
        color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        width = min(typer.get_terminal_size()[0], 120) if color else 80
        sys.stdout.write(text.render(outcome, color=color, width=width))
    else:
        sys.stdout.write(REPORTERS[output.value](outcome))


@app.command()
@guarded
def diff(
    old: Annotated[str, typer.Argument(help="Live or previous CRDs: file, directory or -.")],
    new: Annotated[str, typer.Argument(help="CRDs about to be applied: file, directory or -.")],
    policy: Annotated[str | None, typer.Option(help="Policy file (YAML).")] = None,
    kube_version: Annotated[
        str | None, typer.Option(help="Cluster version MAJOR.MINOR; enables ratcheting.")
    ] = None,
    output: Annotated[Output, typer.Option(help="Report format.")] = Output.text,
    max_bytes: Annotated[int, typer.Option(help="Refuse more input than this per side.")] = (
        DEFAULT_MAX_BYTES
    ),
) -> None:
    """Compare two CRD sets; exit 0 safe, 1 refused, 2 bad input."""
    if old == "-" and new == "-":
        raise UsageProblem("only one of OLD and NEW can be read from standard input")
    version = parse_kube_version(kube_version)
    chosen: Policy = read_policy(policy) if policy else DEFAULT_POLICY
    before, after = load_crd_set(old, max_bytes), load_crd_set(new, max_bytes)
    scoped = history.scoped_to_release(chosen, before, after)
    outcome = engine.compare_crds(before, after, scoped, version)
    report(outcome, output)
    raise typer.Exit(int(outcome.exit_code))


@app.command(name="rules")
def list_rules() -> None:
    """List every rule (code, default severity, name, summary), then verify-history's checks."""
    for rule in rules.ALL_RULES:
        typer.echo(f"{rule.code}  {rule.severity!s:<7}  {rule.name:<32} {rule.summary}")
    for check in history.CHECKS:
        typer.echo(f"{check.code}  {'error':<7}  {check.name:<32} verify-history: {check.summary}.")


def _history_check(code: str) -> history.Check | None:
    wanted = code.strip().lower()
    return next((c for c in history.CHECKS if wanted in (c.code.lower(), c.name)), None)


@app.command()
def explain(code: Annotated[str, typer.Argument(help="A rule code or name.")]) -> None:
    """Print a rule's documentation."""
    rule = rules.lookup(code)
    if rule is not None:
        typer.echo(rule.doc.strip())
        return
    check = _history_check(code)
    if check is None:
        _fail(ExitCode.BAD_INPUT, f"unknown rule {code!r} (see `upgrade-guard rules`)")
    typer.echo(f"{check.code} {check.name}\n\nWhat it flags: {check.summary} (verify-history).")
    typer.echo(f"\n{(history.__doc__ or '').strip()}")


# ---------------------------------------------------------------------------------------
# Contract counters (issue 4): `stamp` and `verify-history`. Self-contained block: its
# imports are local to the functions so the rest of this module does not depend on it.
# ---------------------------------------------------------------------------------------

REQUIRE_EXPLICIT_BASELINE_ENV = "UPGRADE_GUARD_REQUIRE_EXPLICIT_BASELINE"
BASELINE_REF_ENV = "UPGRADE_GUARD_BASELINE_REF"


def _canonical_option(option: str, value: str) -> int:
    from upgrade_guard.policy import canonical_number

    number = canonical_number(value)
    if number is None:
        raise UsageProblem(
            f"{option} {value!r}: expected a canonical positive decimal such as 1 or 12"
            " (no sign, no leading zero, no fraction)"
        )
    return number


def _counter_options(values: list[str], chosen: Policy) -> dict[str, str]:
    """--counter NAME=V options as annotation key -> canonical value."""
    from upgrade_guard.policy import SCHEMA_DIGEST, SCHEMA_VERSION

    result: dict[str, str] = {}
    for item in values:
        name, equals, value = item.partition("=")
        name = name.strip()
        if not equals or not re.fullmatch(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?", name):
            raise UsageProblem(f"--counter {item!r}: expected NAME=VALUE, such as state=3")
        if name in (SCHEMA_VERSION, SCHEMA_DIGEST):
            raise UsageProblem(f"--counter {item!r}: use --schema-version for {name}")
        result[chosen.annotation(name)] = str(_canonical_option(f"--counter {name}", value))
    return result


@app.command(name="stamp")
@guarded
def stamp_command(
    directory: Annotated[str, typer.Argument(help="CRD file or directory (recursively).")],
    schema_version: Annotated[
        str | None,
        typer.Option(help="Schema version to stamp; default: the one already stamped."),
    ] = None,
    counter: Annotated[
        list[str] | None, typer.Option(help="Another counter, NAME=VALUE; repeatable.")
    ] = None,
    check: Annotated[
        bool, typer.Option("--check", help="Change nothing; exit 1 if any file would change.")
    ] = False,
    policy: Annotated[
        str | None, typer.Option(help="Policy file (annotation prefix, counters).")
    ] = None,
) -> None:
    """Write the schema version, digest and counters into CRD files, byte-preserving."""
    from pathlib import Path

    from upgrade_guard.counters import digest
    from upgrade_guard.counters.history import stamped_number
    from upgrade_guard.crd import Source
    from upgrade_guard.load import stamp as stamping
    from upgrade_guard.load.documents import Document
    from upgrade_guard.load.yaml_reader import YamlError, read_documents
    from upgrade_guard.policy import SCHEMA_DIGEST, SCHEMA_VERSION

    chosen: Policy = read_policy(policy) if policy else DEFAULT_POLICY
    version_key = chosen.annotation(SCHEMA_VERSION)
    digest_key = chosen.annotation(SCHEMA_DIGEST)
    wanted_version = (
        _canonical_option("--schema-version", schema_version)
        if schema_version is not None
        else None
    )
    counters = _counter_options(counter or [], chosen)
    try:
        paths = stamping.stamp_files(directory)
    except FileNotFoundError:
        raise LoadError(f"{directory}: no such file or directory") from None
    files: list[tuple[Path, str, dict[str, Crd]]] = []
    for path in paths:
        try:
            text = path.read_bytes().decode("utf-8")
            documents = [
                Document(Source(str(path), index), line, body)
                for index, (line, body) in enumerate(read_documents(text))
            ]
        except OSError as error:
            raise LoadError(f"{path}: cannot read: {error.strerror or error}") from None
        except UnicodeDecodeError as error:
            raise LoadError(f"{path}: not UTF-8 text ({error.reason})") from None
        except YamlError as error:
            raise LoadError(f"{path}: {error}") from None
        found = crds_from(documents)
        if found:
            files.append((path, text, found))
    total = sum(len(found) for _, _, found in files)
    if not total:
        raise LoadError(f"{directory}: no CustomResourceDefinitions to stamp")
    if wanted_version is None:
        stamped = {
            stamped_number(crd, version_key) for _, _, found in files for crd in found.values()
        }
        if len(stamped) != 1 or None in stamped:
            raise UsageProblem(
                f"{directory}: the CRDs do not all carry one {version_key}; give --schema-version"
                " (1 for a first adoption)"
            )
        wanted_version = stamped.pop()
    changed: list[str] = []
    for path, text, found in files:
        try:
            wanted = {
                name: {
                    version_key: str(wanted_version),
                    digest_key: digest.spec_digest(crd.spec),
                    **counters,
                }
                for name, crd in found.items()
            }
            result = stamping.stamp_text(text, wanted, str(path))
        except (stamping.StampError, digest.DigestError) as error:
            raise LoadError(str(error)) from None
        if result == text:
            continue
        changed.append(str(path))
        if check:
            before = stamping.read_annotations(text)
            for name, values in sorted(wanted.items()):
                stale = [k for k, v in values.items() if before.get(name, {}).get(k) != v]
                if stale:
                    typer.echo(f"{path}: CRD {name}: would set {', '.join(stale)}")
        else:
            stamping.write_file(path, result)
    summary = f"{total} CRDs in {len(files)} files, schema version {wanted_version}"
    if check:
        if changed:
            typer.echo(
                f"upgrade-guard: {len(changed)} of {len(files)} files are not stamped as"
                f" they would be ({summary}); run upgrade-guard stamp {directory}"
            )
            raise typer.Exit(int(ExitCode.REFUSED))
        typer.echo(f"upgrade-guard: stamped as it would be: {summary}")
        return
    typer.echo(f"upgrade-guard: stamped {summary}; {len(changed)} files changed")


@app.command(name="verify-history")
@guarded
def verify_history_command(
    directory: Annotated[str, typer.Argument(help="The CRD directory, inside a git work tree.")],
    baseline_ref: Annotated[
        str | None,
        typer.Option(
            envvar=BASELINE_REF_ENV,
            help="Compare the working tree with this ref. Default: the working tree against"
            " HEAD when DIR (or a counter's files) has uncommitted changes, else HEAD"
            " against HEAD^.",
        ),
    ] = None,
    require_explicit_baseline: Annotated[
        bool,
        typer.Option(
            "--require-explicit-baseline",
            envvar=REQUIRE_EXPLICIT_BASELINE_ENV,
            help="Refuse to guess the baseline (for CI).",
        ),
    ] = False,
    policy: Annotated[str | None, typer.Option(help="Policy file (YAML).")] = None,
    output: Annotated[Output, typer.Option(help="Report format.")] = Output.text,
    max_bytes: Annotated[int, typer.Option(help="Refuse more input than this per side.")] = (
        DEFAULT_MAX_BYTES
    ),
) -> None:
    """Check the CRDs' schema version and counters against git history; exit 0, 1 or 2."""
    import hashlib

    from upgrade_guard.counters import digest
    from upgrade_guard.counters.history import Side, verify_history
    from upgrade_guard.load import git_tree
    from upgrade_guard.report.history import RENDERERS

    chosen: Policy = read_policy(policy) if policy else DEFAULT_POLICY
    repository = git_tree.Repository.containing(directory)
    prefix = repository.prefix
    shown = prefix or "."
    baseline: git_tree.Tree
    candidate: git_tree.Tree
    if baseline_ref:
        commit = repository.commit(baseline_ref)
        if commit is None:
            raise LoadError(f"--baseline-ref {baseline_ref}: no such commit in {repository.root}")
        baseline = git_tree.GitTree(repository, baseline_ref, commit)
        candidate = git_tree.WorkTree(repository)
        source = f"explicit: the working tree against {baseline_ref}"
    elif require_explicit_baseline:
        raise UsageProblem(
            f"--require-explicit-baseline (or {REQUIRE_EXPLICIT_BASELINE_ENV}) is set:"
            " give --baseline-ref REF"
        )
    elif repository.has_changes(prefix, [p for c in chosen.counters for p in c.files]):
        baseline = git_tree.GitTree(repository, "HEAD", repository.commit("HEAD"))
        candidate = git_tree.WorkTree(repository)
        counted = " (or a counter's files)" if any(c.files for c in chosen.counters) else ""
        source = (
            f"guessed: {shown}{counted} has uncommitted changes, so the working tree against HEAD"
        )
    else:
        head = repository.commit("HEAD")
        if head is None:
            raise LoadError(f"{directory}: the repository has no commits")
        parent = repository.commit("HEAD^")
        baseline = git_tree.GitTree(repository, "HEAD^", parent)
        candidate = git_tree.GitTree(repository, "HEAD", head)
        source = f"guessed: {shown} is clean, so HEAD against HEAD^"
        if parent is None:
            source += " (HEAD has no parent: empty baseline)"

    def side(tree: git_tree.Tree) -> Side:
        file_digests: dict[str, str] = {}
        for counter in chosen.counters:
            if counter.files:
                contents = git_tree.contents_of(tree, counter.files)
                listing = "".join(
                    f"{path}\0{hashlib.sha256(data).hexdigest()}\n"
                    for path, data in sorted(contents.items())
                )
                file_digests[counter.name] = hashlib.sha256(listing.encode()).hexdigest()
        return Side(tree.label, git_tree.crds_in(tree, prefix, max_bytes), file_digests)

    before, after = side(baseline), side(candidate)
    if not before.crds and not after.crds:
        raise LoadError(f"{shown}: no CustomResourceDefinitions in {after.label} or {before.label}")
    try:
        history = verify_history(before, after, chosen, source)
    except digest.DigestError as error:
        raise LoadError(str(error)) from None
    sys.stdout.write(RENDERERS[output.value](history))
    raise typer.Exit(int(history.outcome.exit_code))


# ----------------------------------------------------------- end of contract counters


def main() -> None:
    app()
