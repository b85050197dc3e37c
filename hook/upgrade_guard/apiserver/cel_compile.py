"""``x-kubernetes-validations`` compiled as kube-apiserver compiles them when it accepts a CRD
(apiextensions-apiserver ``pkg/apiserver/schema/cel/compilation.go``), on the CEL C++ checker.

``self`` and ``oldSelf`` are typed by the schema node as the apiserver types them
(:mod:`cel_types`). Object types are protobuf messages built from those types, so the
checker reports undefined fields as the apiserver does.

Where the C++ checker cannot say what cel-go says, nothing is refused (:attr:`Compiled.unknown`):
a protobuf field cannot hold a list or map of lists or maps, so those are typed
``list(dyn)``/``map(string, dyn)`` inside objects, and libraries the runtime lacks (format,
lists v3, two-variable comprehensions, the list overloads of ``indexOf``) are not declared.
Ordering across ``int``, ``uint`` and ``double`` compiles, as in cel-go's
``CrossTypeNumericComparisons`` (1.28+).

:func:`verdicts` checks a version schema's rules (compiled, and costed by :mod:`cel_cost`),
each once per what it reads (:mod:`cel_reads`); :func:`site_verdicts` checks a node's
rules against the node whole, where a rule's verdict from its cut-down node would not do.
Each expression compiles in the environment of a compatibility version (:mod:`minors`):
that of new expressions, or, for those the CRD it replaces held already (:class:`Stored`),
that of stored expressions; one that uses a library that version lacks is refused (this
runtime lacks some libraries of newer versions, but not their absence).

The environment is for checking only: :func:`typed_environment` gives it with the schema
node behind every object type (for cost bounds); :func:`compile_expression` compiles one
expression in it (``Expression.serialize()`` is the checked AST). Rules are evaluated by
:mod:`cel_rules` on the untyped runtime.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import marshal
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from cel_expr_python import cel  # type: ignore[import-untyped]
from cel_expr_python.ext import ext_optional, ext_strings  # type: ignore[import-untyped]
from google.protobuf import (  # type: ignore[import-untyped]
    descriptor_pb2,
    descriptor_pool,
    duration_pb2,
    struct_pb2,
    timestamp_pb2,
)

from upgrade_guard import schema as schemas

from . import cel_cost, cel_library, cel_literals, cel_reads, cel_source, cel_types, minors
from .cel_reads import Site

Schema = Mapping[str, Any]
# A declared type, hashable: ("string",), ("list", item), ("map", value),
# ("object", ((field name, type), ...)); "dyn" for int-or-string.
Decl = tuple[Any, ...]


def signature(declared: cel_types.DeclType, names: frozenset[str] | None = None) -> Decl:
    """A declared type as the checker's environment is keyed and built by. With ``names``,
    objects keep only the fields so named: an expression can select no other, so it checks
    the same against the smaller type."""
    if declared.kind in ("list", "map"):
        assert declared.elem is not None
        return (declared.kind, signature(declared.elem, names))
    if declared.kind != "object":
        return (declared.kind,)
    fields = []
    for name in declared.field_names:
        field = None if names is not None and name not in names else declared.field(name)
        if field is not None:
            fields.append((name, signature(field, names)))
    return ("object", tuple(sorted(fields)))


# Protobuf messages for object types -----------------------------------------------------------
_F = descriptor_pb2.FieldDescriptorProto
_PROTO_SCALARS = {
    "string": _F.TYPE_STRING,
    "bool": _F.TYPE_BOOL,
    "int": _F.TYPE_INT64,
    "double": _F.TYPE_DOUBLE,
    "bytes": _F.TYPE_BYTES,
}
_WELL_KNOWN = {
    "timestamp": ".google.protobuf.Timestamp",
    "duration": ".google.protobuf.Duration",
    "dyn": ".google.protobuf.Value",
}
_PACKAGE = "schema"


def _message_name(decl: Decl) -> str:
    return "T" + hashlib.sha256(repr(decl).encode()).hexdigest()[:20]


def _entry_name(field: str) -> str:
    """protobuf's name of a map field's entry message: the field's name in camel case."""
    parts = field.split("_")
    return "".join(part[:1].upper() + part[1:] for part in parts) + "Entry"


def _approximate(decl: Decl) -> bool:
    """Whether a field of this type is held as less than it is (a list or map of lists or
    maps, which a protobuf field cannot hold)."""
    return decl[0] in ("list", "map") and decl[1][0] in ("list", "map")


class _Messages:
    """The messages of one environment's object types, in one protobuf file."""

    def __init__(self) -> None:
        self.file = descriptor_pb2.FileDescriptorProto(
            name="schema.proto", package=_PACKAGE, syntax="proto2"
        )
        self.file.dependency.extend(
            [
                "google/protobuf/timestamp.proto",
                "google/protobuf/duration.proto",
                "google/protobuf/struct.proto",
            ]
        )
        self.types: dict[str, Decl] = {}
        self.approximate: set[str] = set()

    def message(self, decl: Decl) -> str:
        name = _message_name(decl)
        if name in self.types:
            return name
        self.types[name] = decl
        message = self.file.message_type.add(name=name)
        taken = {field_name for field_name, _ in decl[1]}  # one scope: fields, nested types
        for number, (field_name, field) in enumerate(decl[1], start=1):
            self._field(message, number, field_name, field, taken)
        return name

    def _field(self, message: Any, number: int, name: str, decl: Decl, taken: set[str]) -> None:
        # json_name is set apart: protobuf refuses fields whose default JSON names clash
        # (foo_bar and fooBar), which CRD properties may well do.
        added = message.field.add(
            name=name, number=number, json_name=f"f{number}", label=_F.LABEL_OPTIONAL
        )
        if _approximate(decl):
            self.approximate.add(name)
            well_known = "ListValue" if decl[0] == "list" else "Struct"
            added.type, added.type_name = _F.TYPE_MESSAGE, f".google.protobuf.{well_known}"
        elif decl[0] == "list":
            added.label = _F.LABEL_REPEATED
            self._element(added, decl[1])
        elif decl[0] == "map" and _entry_name(name) not in taken:
            # protobuf names a map's entry after its field, and refuses any other name
            taken.add(_entry_name(name))
            entry = message.nested_type.add(name=_entry_name(name))
            entry.options.map_entry = True
            entry.field.add(name="key", number=1, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
            value = entry.field.add(name="value", number=2, label=_F.LABEL_OPTIONAL)
            self._element(value, decl[1])
            added.label = _F.LABEL_REPEATED
            added.type = _F.TYPE_MESSAGE
            added.type_name = f".{_PACKAGE}.{message.name}.{_entry_name(name)}"
        elif decl[0] == "map":  # an entry protobuf would name as another field or entry
            self.approximate.add(name)
            added.type, added.type_name = _F.TYPE_MESSAGE, ".google.protobuf.Struct"
        else:
            self._element(added, decl)

    def _element(self, field: Any, decl: Decl) -> None:
        if decl[0] in _PROTO_SCALARS:
            field.type = _PROTO_SCALARS[decl[0]]
        elif decl[0] in _WELL_KNOWN:
            field.type, field.type_name = _F.TYPE_MESSAGE, _WELL_KNOWN[decl[0]]
        else:
            field.type = _F.TYPE_MESSAGE
            field.type_name = f".{_PACKAGE}.{self.message(decl)}"

    def cel_type(self, decl: Decl) -> Any:
        if decl[0] == "list":
            return cel.Type.List(self.cel_type(decl[1]))
        if decl[0] == "map":
            return cel.Type.Map(cel.Type.STRING, self.cel_type(decl[1]))
        if decl[0] == "object":
            return cel.Type(f"{_PACKAGE}.{self.message(decl)}")
        return _CEL_TYPES[decl[0]]

    def pool(self) -> Any:
        pool = descriptor_pool.DescriptorPool()
        for module in (timestamp_pb2, duration_pb2, struct_pb2):
            known = descriptor_pb2.FileDescriptorProto()
            module.DESCRIPTOR.CopyToProto(known)
            pool.Add(known)
        pool.Add(self.file)
        return pool


_CEL_TYPES = {
    "string": cel.Type.STRING,
    "bool": cel.Type.BOOL,
    "int": cel.Type.INT,
    "double": cel.Type.DOUBLE,
    "bytes": cel.Type.BYTES,
    "timestamp": cel.Type.TIMESTAMP,
    "duration": cel.Type.DURATION,
    "dyn": cel.Type.DYN,
}

# The ordering operators, redeclared with cel-go's cross-type numeric overloads.
_ORDERING = (
    ("_<_", "less"),
    ("_<=_", "less_equals"),
    ("_>_", "greater"),
    ("_>=_", "greater_equals"),
)
_ORDERED = (
    ("bool", cel.Type.BOOL),
    ("int64", cel.Type.INT),
    ("uint64", cel.Type.UINT),
    ("double", cel.Type.DOUBLE),
    ("string", cel.Type.STRING),
    ("bytes", cel.Type.BYTES),
    ("timestamp", cel.Type.TIMESTAMP),
    ("duration", cel.Type.DURATION),
)
_NUMBERS = _ORDERED[1:4]
_WITHOUT_ORDERING = "stdlib:\n  exclude_functions:\n" + "".join(
    f"    - name: {op}\n" for op, _ in _ORDERING
)


def _never(*_: Any) -> bool:
    raise NotImplementedError("the typed environment checks; cel_rules evaluates")


@cache
def _ordering() -> list[Any]:
    declarations = []
    for op, name in _ORDERING:
        overloads = [
            cel.Overload(f"{name}_{kind}", cel.Type.BOOL, [t, t], impl=_never)
            for kind, t in _ORDERED
        ]
        overloads += [
            cel.Overload(f"{name}_{a}_{b}", cel.Type.BOOL, [ta, tb], impl=_never)
            for a, ta in _NUMBERS
            for b, tb in _NUMBERS
            if a != b
        ]
        declarations.append(cel.FunctionDecl(op, overloads))
    return declarations


_OLD_VALUE = "__oldSelfValue__"
_OPTIONAL_OLD_SELF = f"[optional.of({_OLD_VALUE})].map(oldSelf, "


@dataclass(frozen=True)
class TypedEnvironment:
    """A CEL environment with ``self`` (and ``oldSelf``) typed as the apiserver types them
    for one schema node."""

    env: Any
    self_type: Decl
    messages: Mapping[str, Decl]
    """Each protobuf message (``schema.T...``) by the object type it stands for."""
    approximate: frozenset[str]
    """The fields whose type is held as less than it is (see the module's documentation)."""
    kube_version: tuple[int, int]
    optional_old_self: bool
    """Whether ``oldSelf`` is ``optional_type(self)``: the runtime cannot declare a variable
    of that type, so expressions are compiled inside a comprehension binding it."""


@lru_cache(maxsize=32)  # about 330 kB each; a node's rules share one
def _environment(self_type: Decl, old_self: str, kube_version: tuple[int, int]) -> TypedEnvironment:
    messages = _Messages()
    variables = {"self": messages.cel_type(self_type)}
    if old_self == "required":
        variables["oldSelf"] = variables["self"]
    elif old_self == "optional":
        variables[_OLD_VALUE] = variables["self"]
    extensions: list[Any] = [ext_strings.ExtStrings()]
    if kube_version >= (1, 28):
        extensions.append(ext_optional.ExtOptional())
    env = cel.NewEnv(
        descriptor_pool=messages.pool(),
        config=cel.NewEnvConfigFromYaml(_WITHOUT_ORDERING),
        variables=variables,
        extensions=extensions,
        functions=[*cel_library.functions(kube_version), *_ordering()],
    )
    return TypedEnvironment(
        env=env,
        self_type=self_type,
        kube_version=kube_version,
        optional_old_self=old_self == "optional",
        messages={f"{_PACKAGE}.{name}": decl for name, decl in messages.types.items()},
        approximate=frozenset(messages.approximate),
    )


def typed_environment(
    self_type: Decl,
    kube_version: tuple[int, int],
    optional_old_self: bool = False,
    old_self: bool = True,
) -> TypedEnvironment:
    """The environment rules of a node of ``self_type`` (:func:`signature`) compile in;
    with ``optional_old_self``, ``oldSelf`` is ``optional_type(self)``; without ``old_self``,
    it is undeclared."""
    which = "optional" if optional_old_self else "required" if old_self else "none"
    return _environment(self_type, which, kube_version)


# Compiling ------------------------------------------------------------------------------------
# Functions and macros of the apiserver's libraries this runtime lacks: a rule that fails
# to compile naming one of them may compile there.
_UNMODELED = frozenset(
    {
        *("format", "validate", "indexOf", "lastIndexOf"),
        *("distinct", "flatten", "range", "reverse", "slice", "sort", "sortBy", "first", "last"),
        *("all", "exists"),
        *("transformList", "transformMap", "transformMapEntry", "lists"),
        *("authorizer", "image", "isImage"),
    }
)
_NAMED = re.compile(r"(?:undeclared reference to|no matching overload for) '([^']+)'")
# existsOne and exists_one only with two variables: cel-go's standard macros (every minor's
# environment) have exists_one with one, not existsOne (cel.StandardMacros).
_TWO_VARIABLE = re.compile(r"\.\s*(?:all|exists|existsOne|exists_one)\s*\(\s*\w+\s*,\s*\w+\s*,")
_STRUCT_FIELD = re.compile(r"(undefined field '[^']*') not found in struct '[^']*'")
_NO_SELECT = re.compile(r"expression of type '(\w+)' cannot be the operand of a select operation")
_OLD_SELF = re.compile(r"\boldSelf\b")
# The C++ runtime drops a descriptor pool it cannot load, leaving object types opaque.
_OPAQUE = re.compile(rf"expression of type '{_PACKAGE}\.T\w+' cannot be the operand of a select")


@dataclass(frozen=True)
class Compiled:
    """One expression compiled; at most one of ``problem`` and ``unknown`` is set."""

    expression: Any
    """The checked expression, or None when it did not compile."""
    problem: str | None
    """The apiserver's reason for refusing it, in its words."""
    unknown: str | None
    """Why this runtime cannot tell whether the apiserver compiles it."""
    output: Any = None


def _issues(err: Exception) -> str:
    """The checker's issues as cel-go prints them (the C++ checker adds a status code and,
    for an undefined field, the message type)."""
    text = str(err).removeprefix("INVALID_ARGUMENT: ")
    text = re.sub(r"\s*\[INVALID_ARGUMENT\]$", "", text)
    text = _STRUCT_FIELD.sub(r"\1", text)
    return _NO_SELECT.sub(r"type '\1' does not support field selection", text)


def compile_expression(environment: TypedEnvironment, text: str) -> Compiled:
    """``text`` compiled in ``environment``: the checked expression, or why it does not
    compile (``problem``: ``compilation failed: ...``), or why that cannot be told here."""
    lead = _OPTIONAL_OLD_SELF if environment.optional_old_self else ""
    source = cel_source.for_runtime(text)
    try:
        expression = environment.env.compile(f"{lead}{source})[0]" if lead else source)
    except Exception as err:  # the runtime raises plain RuntimeError with the checker's text
        if _OPAQUE.search(str(err)):
            return Compiled(None, None, f"the schema's types did not load: {err}")
        issues = _issues(err)
        written = _issues_as_written(environment, lead, text) if source != text else None
        if written is not None:
            issues, source = written, text
        if lead or source != text:
            issues = cel_source.as_written(issues, text, source, lead)
        named = set(_NAMED.findall(issues))
        # This runtime lacks some libraries; an environment without them refuses for certain.
        lacking = minors.missing(text, environment.kube_version)
        if not lacking and (named & _UNMODELED or _TWO_VARIABLE.search(text)):
            return Compiled(None, None, f"uses a library this runtime lacks: {issues}")
        return Compiled(None, f"compilation failed: {issues}", None)
    if environment.kube_version >= (1, 29):
        literals = cel_literals.problems(text)
        if literals:
            return Compiled(None, "compilation failed: " + "\n".join(literals), None)
    return Compiled(expression, None, None, expression.return_type())


def _issues_as_written(environment: TypedEnvironment, lead: str, text: str) -> str | None:
    """cel-cpp's issues for ``text`` as written where they are cel-go's: where they hold no
    raw literal it misreads (:mod:`cel_source`). They then place tokens it does not lex as
    cel-go places them, which those of the text given it may not."""
    try:
        environment.env.compile(f"{lead}{text})[0]" if lead else text)
    except Exception as err:  # the runtime raises plain RuntimeError with the checker's text
        issues = _issues(err)
        return None if cel_source.MISREAD.search(issues) else issues
    return None


@dataclass(frozen=True)
class RuleCompiled:
    """A rule as the apiserver compiles it: the first problem it reports, if any."""

    rule: Compiled
    uses_old_self: bool
    field: str | None = None
    """The rule's field the problem is at (``rule``, ``messageExpression``), or None."""
    problem: str | None = None
    unknown: str | None = None


def compile_rule(
    raw: Mapping[str, Any],
    self_type: Decl,
    kube_version: tuple[int, int],
    message_version: tuple[int, int] | None = None,
) -> RuleCompiled:
    """One ``x-kubernetes-validations`` entry of a node of ``self_type``: the rule (it must
    be a bool) and its messageExpression (a string), in the environments of ``kube_version``
    and ``message_version`` (the same where not given)."""
    optional = raw.get("optionalOldSelf") is True
    text = str(raw.get("rule") or "")
    environment = typed_environment(self_type, kube_version, optional)
    rule = compile_expression(environment, text)
    uses_old_self = bool(_OLD_SELF.search(text)) and _uses_old_self(self_type, text, kube_version)
    if rule.problem or rule.unknown:
        return RuleCompiled(rule, uses_old_self, "rule", rule.problem, rule.unknown)
    if rule.output != cel.Type.BOOL:
        if rule.output == cel.Type.DYN and _reads(text, environment.approximate):
            return RuleCompiled(rule, uses_old_self, "rule", None, "its type is held as dyn")
        return RuleCompiled(rule, uses_old_self, "rule", "cel expression must evaluate to a bool")
    message = str(raw.get("messageExpression") or "")
    if message:
        if message_version is not None and message_version != kube_version:
            environment = typed_environment(self_type, message_version, optional)
        compiled = compile_expression(environment, message)
        if compiled.unknown:
            return RuleCompiled(rule, uses_old_self, "messageExpression", None, compiled.unknown)
        if compiled.problem:
            return RuleCompiled(
                rule, uses_old_self, "messageExpression", f"messageExpression {compiled.problem}"
            )
        if compiled.output != cel.Type.STRING:
            if compiled.output == cel.Type.DYN and _reads(message, environment.approximate):
                return RuleCompiled(rule, uses_old_self, None, None, "its type is held as dyn")
            return RuleCompiled(
                rule,
                uses_old_self,
                "messageExpression",
                "messageExpression must evaluate to a string",
            )
    return RuleCompiled(rule, uses_old_self)


_RULE_FIELDS = ("rule", "messageExpression", "optionalOldSelf")


Versions = tuple[tuple[int, int], tuple[int, int]]
"""The compatibility versions a rule and its messageExpression compile at."""


@dataclass(frozen=True)
class Stored:
    """The expressions of the CRD an update replaces (apiextensions
    ``findPreexistingExpressions``: every version's rules and messageExpressions): the same
    text in the new CRD compiles in the environment of stored expressions, at ``version``."""

    version: tuple[int, int]
    rules: frozenset[str]
    messages: frozenset[str]


def _versions(raw: Mapping[str, Any], new: tuple[int, int], stored: Stored | None) -> Versions:
    if stored is None:
        return new, new
    rule = stored.version if str(raw.get("rule") or "") in stored.rules else new
    message = str(raw.get("messageExpression") or "")
    return rule, stored.version if message in stored.messages else new


@lru_cache(maxsize=4096)
def _compiled_rule(
    fields: tuple[tuple[str, Any], ...], self_type: Decl, versions: Versions
) -> RuleCompiled:
    """compile_rule's verdict, once per rule and type (CRDs repeat both across versions);
    without the checked expression, which holds its whole environment in memory."""
    compiled = compile_rule(dict(fields), self_type, *versions)
    return dataclasses.replace(compiled, rule=Compiled(None, compiled.rule.problem, None))


def _reads(text: str, fields: frozenset[str]) -> bool:
    """Whether ``text`` may read one of ``fields`` (it names it)."""
    return any(re.search(rf"\b{re.escape(name)}\b", text) for name in fields)


def _uses_old_self(self_type: Decl, text: str, kube_version: tuple[int, int]) -> bool:
    """Whether the checked rule refers to ``oldSelf`` (not merely spells it in a string):
    it does not compile without it."""
    try:
        typed_environment(self_type, kube_version, old_self=False).env.compile(
            cel_source.for_runtime(text)
        )
    except Exception:
        return True
    return False


# A version's schema -----------------------------------------------------------------------------
_TEXTS = ("rule", "messageExpression")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NO_TYPE = (
    "Internal error: internal error: failed to construct type information for"
    " x-kubernetes-validations rules: unable to convert structural schema to CEL declarations"
)
_REASONS = ("FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired")
_NEWLINES = re.compile(r"[\n\r]+")


@dataclass(frozen=True)
class RuleProblem:
    """Why the apiserver refuses a node's rules: the schema node (path parts, as
    crd_validation spells them), the keyword (``x-kubernetes-validations[0].rule``) and the
    apiserver's detail."""

    parts: tuple[str, ...]
    keyword: str
    detail: str


@dataclass(frozen=True)
class Verdict:
    """One rule as the apiserver checks it when it accepts a CRD: compiled, and its
    estimated costs (None where its node has no cost declaration)."""

    compiled: RuleCompiled
    estimated: cel_cost.Estimated | None

    def clean(self, raw: Mapping[str, Any]) -> bool:
        """Compiled without a problem or doubt, and every expression estimated."""
        estimated = self.estimated
        return (
            self.compiled.problem is None
            and self.compiled.unknown is None
            and estimated is not None
            and estimated.rule is not None
            and (estimated.message is not None or not str(raw.get("messageExpression") or ""))
        )


def site_verdicts(
    site: Site,
    kube_version: tuple[int, int],
    stored: Stored | None = None,
    server: minors.Minor = minors.NEWEST,
) -> list[Verdict | None] | None:
    """Each rule of a node compiled against the node's type and costed (None for an entry
    without a rule); None where CEL gives the node no type. Rules compile at
    ``kube_version``, those ``stored`` holds at its version; costs are estimated as the
    apiserver of ``server`` estimates them."""
    declared = cel_types.declare(site.node, site.resource_root)
    if declared is None:
        return None
    texts = [
        str(raw.get(k) or "") for raw in site.rules if isinstance(raw, Mapping) for k in _TEXTS
    ]
    named = frozenset(name for text in texts for name in _IDENTIFIER.findall(text))
    self_type = signature(declared, named)
    return [_verdict(raw, self_type, declared, kube_version, stored, server) for raw in site.rules]


def _verdict(
    raw: Any,
    self_type: Decl,
    decl: cel_types.DeclType,
    kube_version: tuple[int, int],
    stored: Stored | None,
    server: minors.Minor,
) -> Verdict | None:
    if not _is_rule(raw):
        return None
    versions = _versions(raw, kube_version, stored)
    compiled = _compiled_rule(_rule_fields(raw), self_type, versions)
    estimated = cel_cost.estimated(raw, decl, server)
    return Verdict(compiled, estimated)


def _rule_fields(raw: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple((key, raw.get(key)) for key in _RULE_FIELDS)


def verdicts(
    sites: list[Site],
    kube_version: tuple[int, int],
    stored: Stored | None = None,
    server: minors.Minor = minors.NEWEST,
) -> list[list[Verdict | None] | None]:
    """:func:`site_verdicts` of every site, each rule checked once per what it reads.

    A rule's verdict is kept under its fields and its node cut down to what it reads
    (:mod:`cel_reads`): the provider CRDs' thousands of rules are a few hundred such. A
    node's rules not seen yet are checked together against its cut-down node (a small
    type: cheap to declare and compile in). Only a clean verdict is taken from there: a
    problem's words can name the cut-down types, so a rule with a problem or a doubt is
    checked again against its node whole."""
    return [_read_verdicts(site, kube_version, stored, server) for site in sites]


_KEPT_VERDICTS = 4096
_VERDICTS: dict[tuple[Any, ...], Verdict] = {}


def _read_verdicts(
    site: Site, kube_version: tuple[int, int], stored: Stored | None, server: minors.Minor
) -> list[Verdict | None] | None:
    if not cel_types.has_type(site.node, site.resource_root):
        return None
    rules = [_is_rule(raw) for raw in site.rules]
    keys = [
        _read_key(raw, site, _versions(raw, kube_version, stored), server) if is_rule else None
        for raw, is_rule in zip(site.rules, rules, strict=True)
    ]
    checked = [_VERDICTS.get(key) if key else None for key in keys]
    missed = [(index, key) for index, key in enumerate(keys) if key and checked[index] is None]
    if missed:
        read = cel_reads.Reach()
        for index, _ in missed:
            read.merge(cel_reads.rule_read(site.rules[index]).reach)
        cut = cel_reads.cut(site.node, read, site.resource_root)
        cut_decl = cel_types.declare(cut, site.resource_root)
        cut_type = None if cut_decl is None else signature(cut_decl)
        for index, key in missed:
            found = (
                None
                if cut_decl is None or cut_type is None
                else _verdict(site.rules[index], cut_type, cut_decl, kube_version, stored, server)
            )
            if found is not None:
                while len(_VERDICTS) >= _KEPT_VERDICTS:
                    del _VERDICTS[next(iter(_VERDICTS))]
                checked[index] = _VERDICTS[key] = found
    whole: list[Verdict | None] | None = None
    for index, (raw, is_rule, found) in enumerate(zip(site.rules, rules, checked, strict=True)):
        if is_rule and (found is None or not found.clean(raw)):
            whole = whole or site_verdicts(site, kube_version, stored, server)
            checked[index] = None if whole is None else whole[index]
    return checked


def _is_rule(raw: Any) -> bool:
    return isinstance(raw, Mapping) and bool(str(raw.get("rule") or "").strip())


def _read_key(raw: Mapping[str, Any], site: Site, versions: Versions, server: minors.Minor) -> Any:
    """What a rule's verdict depends on: its expressions' shape, optionalOldSelf, the
    environments and the estimator it is checked with, and its node cut down to what it
    reads (a SHA-256 digest of its serialization, as crd_validation keys the subtrees that
    passed); None where that cannot be written."""
    read = cel_reads.rule_read(raw)
    cut = cel_reads.cut(site.node, read.reach, site.resource_root, read.aliases)
    try:
        digest = hashlib.sha256(marshal.dumps(cut, 2)).digest()
    except ValueError:  # a value marshal cannot write
        return None
    return (read.shape, raw.get("optionalOldSelf"), site.resource_root, versions, server, digest)


def estimates(checked: list[list[Verdict | None] | None]) -> list[list[cel_cost.Estimated | None]]:
    """The estimated costs of :func:`verdicts`, for :func:`cel_cost.budget_problems`."""
    return [
        [None if found is None else found.estimated for found in site or ()] for site in checked
    ]


def schema_problems(
    sites: list[Site], checked: list[list[Verdict | None] | None], prefix: Callable[[], str]
) -> Iterator[RuleProblem]:
    """The refusals of the rules of one version's schema (:func:`cel_reads.sites`, with
    their :func:`verdicts`), in walking order; ``prefix`` gives the apiserver's path of the
    schema, for the messages that name one."""
    for site, found in zip(sites, checked, strict=True):
        yield from _node_problems(site, found, prefix)


def _render(prefix: str, parts: tuple[str, ...]) -> str:
    """The apiserver's field path of a schema node (``prefix``: the version's schema)."""
    text = prefix
    for part in parts:
        if part == schemas.ADDITIONAL:
            text += ".additionalProperties"
        elif part == schemas.ITEMS:
            text += ".items"
        else:
            text += f".properties[{part}]"
    return text


def _node_problems(
    site: Site, checked: list[Verdict | None] | None, prefix: Callable[[], str]
) -> Iterator[RuleProblem]:
    parts = site.parts
    for index, raw in enumerate(site.rules):
        if isinstance(raw, Mapping):
            field_problem = _field_problem(raw, site.node)
            if field_problem is not None:
                field, detail = field_problem
                yield RuleProblem(parts, f"x-kubernetes-validations[{index}].{field}", detail)
    if checked is None:
        yield RuleProblem(parts, "x-kubernetes-validations", _NO_TYPE)
        return
    for index, (raw, verdict) in enumerate(zip(site.rules, checked, strict=True)):
        if verdict is None:
            continue
        compiled = verdict.compiled
        if compiled.problem is not None and compiled.field is not None:
            yield RuleProblem(
                parts,
                f"x-kubernetes-validations[{index}].{compiled.field}",
                _invalid_rule(raw, compiled.problem),
            )
        if compiled.uses_old_self and site.uncorrelatable is not None:
            yield RuleProblem(
                parts,
                f"x-kubernetes-validations[{index}].rule",
                f"Invalid value: {_go_string(str(raw.get('rule')))}: oldSelf cannot be used on"
                " the uncorrelatable portion of the schema within"
                f" {_render(prefix(), site.uncorrelatable)}",
            )
        elif (
            raw.get("optionalOldSelf") is not None
            and compiled.unknown is None
            and not compiled.uses_old_self
        ):
            yield RuleProblem(
                parts,
                f"x-kubernetes-validations[{index}].optionalOldSelf",
                f"Invalid value: {_go_bool(raw['optionalOldSelf'])}: may not be set if"
                " oldSelf is not used in rule",
            )


def _field_problem(raw: Mapping[str, Any], node: Schema) -> tuple[str, str] | None:
    """The checks of a rule's own fields (apiextensions validation.go), first one found."""
    rule = str(raw.get("rule") or "")
    message = str(raw.get("message") or "")
    if not rule.strip():
        return "rule", "Required value: rule is not specified"
    if message and not message.strip():
        return (
            "message",
            f"Invalid value: {_go_string(message)}: message must be non-empty if specified",
        )
    if _NEWLINES.search(message.strip()):
        return (
            "message",
            f"Invalid value: {_go_string(message)}: message must not contain line breaks",
        )
    if _NEWLINES.search(rule.strip()) and not message.strip():
        return "message", "Required value: message must be specified if rule contains line breaks"
    expression = str(raw.get("messageExpression") or "")
    if expression and not expression.strip():
        return (
            "messageExpression",
            "Required value: messageExpression must be non-empty if specified",
        )
    reason = raw.get("reason")
    if reason is not None and reason not in _REASONS:
        supported = ", ".join(f'"{r}"' for r in _REASONS)
        return (
            "reason",
            f"Unsupported value: {_go_string(str(reason))}: supported values: {supported}",
        )
    field_path = raw.get("fieldPath")
    if isinstance(field_path, str) and field_path:
        if not field_path.strip():
            return (
                "fieldPath",
                f"Invalid value: {_go_string(field_path)}:"
                " fieldPath must be non-empty if specified",
            )
        if _NEWLINES.search(field_path):
            return (
                "fieldPath",
                f"Invalid value: {_go_string(field_path)}: fieldPath must not contain line breaks",
            )
        if not valid_field_path(field_path, node):
            return (
                "fieldPath",
                f"Invalid value: {_go_string(field_path)}: fieldPath must be a valid path",
            )
    return None


def _go_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _go_bool(value: Any) -> str:
    return "true" if value is True else "false"


def _invalid_rule(raw: Mapping[str, Any], detail: str) -> str:
    """field.Invalid with the whole rule as its value, as the apiserver prints it (JSON)."""
    shown = {
        "Rule": str(raw.get("rule") or ""),
        "Message": str(raw.get("message") or ""),
        "MessageExpression": str(raw.get("messageExpression") or ""),
        "Reason": raw.get("reason"),
        "FieldPath": str(raw.get("fieldPath") or ""),
        "OptionalOldSelf": raw.get("optionalOldSelf"),
    }
    return f"Invalid value: {_go_json(shown)}: {detail}"


def _go_json(value: Any) -> str:
    """Go's json.Marshal: compact, HTML characters escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


# fieldPath (apiextensions pkg/apiserver/schema/cel ValidFieldPath) ------------------------------


def _path_tokens(path: str) -> Iterator[str]:
    """Go's scanner of the JSON path: '.', '[' and ']' alone, a quoted string up to its
    unescaped closing quote, any other text up to the next delimiter."""
    i = 0
    while i < len(path):
        if path[i] == "'":
            end = next(
                (k for k in range(i + 1, len(path)) if path[k] == "'" and path[k - 1] != "\\"),
                None,
            )
            if end is None:
                yield path[i:]
                return
            yield path[i : end + 1]
            i = end + 1
        elif path[i] in ".[]":
            yield path[i]
            i += 1
        else:
            j = i
            while j < len(path) and path[j] not in ".[]":
                j += 1
            yield path[i:j]
            i = j


def _unquoted(token: str) -> str | None:
    if len(token) < 2 or token[0] != "'" or token[-1] != "'":
        return None
    out, body, i = [], token[1:-1], 0
    while i < len(body):
        if body[i] == "\\":
            if i + 1 >= len(body) or body[i + 1] not in cel_literals.QUOTED_ESCAPES:
                return None
            out.append(cel_literals.QUOTED_ESCAPES[body[i + 1]])
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


def valid_field_path(path: str, node: Schema) -> bool:
    """Whether ``path`` names a field of ``node`` as ``ValidFieldPath`` requires: ``.name``
    or ``['name']`` steps through properties, or map keys under additionalProperties."""
    tokens = _path_tokens(path)
    current: Any = node
    for token in tokens:
        if token == "[":
            name = _unquoted(next(tokens, ""))
            if name is None or next(tokens, None) != "]":
                return False
        elif token == ".":
            name = next(tokens, None)
            if name is None:
                return False
        else:
            return False
        if not isinstance(current, Mapping):
            return False
        if current.get("properties") is not None:
            found = (current.get("properties") or {}).get(name)
            if found is None:
                return False
            current = found
        elif current.get("additionalProperties") is not None:
            current = current.get("additionalProperties")
        else:
            return False
    return True
