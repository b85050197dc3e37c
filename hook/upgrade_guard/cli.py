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
    outcome = engine.compare_crds(
        load_crd_set(old, max_bytes), load_crd_set(new, max_bytes), chosen, version
    )
    report(outcome, output)
    raise typer.Exit(int(outcome.exit_code))


@app.command(name="rules")
def list_rules() -> None:
    """List every rule: code, default severity, name and summary."""
    for rule in rules.ALL_RULES:
        typer.echo(f"{rule.code}  {rule.severity!s:<7}  {rule.name:<32} {rule.summary}")


@app.command()
def explain(code: Annotated[str, typer.Argument(help="A rule code or name.")]) -> None:
    """Print a rule's documentation."""
    rule = rules.lookup(code)
    if rule is None:
        _fail(ExitCode.BAD_INPUT, f"unknown rule {code!r} (see `upgrade-guard rules`)")
    typer.echo(rule.doc.strip())


def main() -> None:
    app()
