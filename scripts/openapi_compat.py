"""Keeps the published OpenAPI document (docs/openapi.yaml) current and its changes compatible
(docs/contract.md "Versioning and compatibility").

    python scripts/openapi_compat.py           the check scripts/test.sh (and so CI) runs
    python scripts/openapi_compat.py --write   `make openapi`: publish the generated document

The check fails when
1. the generated document narrows the published one: the list of narrowings, and how to publish;
2. the generated document differs from the published one at all: run `make openapi`;
3. a narrowing between two successive committed versions of the published document (first-parent
   history, plus the working tree) is not named in docs/changelog.md: a line holding the
   narrowing's identifier in backticks followed by why, e.g.
   - `GET /api/x: answer 200 field foo removed`: the field was never filled.

A narrowing is whatever can break a client that follows the published document. On the request
side (what a client sends): a path, operation, parameter or field removed, a parameter, body or
field made required or added as required, a type or format changed or an untyped value typed, an
enum value removed or an enum imposed, null no longer taken, a tighter constraint (maxLength,
maximum, maxItems lowered or added; minLength, minimum, minItems raised or added; pattern or
multipleOf changed or added). On the answer side (what a client reads): an answer status, media
type, header or field removed, a field made optional, a type or format changed, an enum value
removed, null now possible. New paths, operations, answers, optional fields and enum values,
looser constraints and changed descriptions or examples are compatible and not reported.

The comparison resolves `$ref`s (with a guard for recursive schemas), merges `allOf` and reads
`oneOf`/`anyOf` as a union (a `null`-only branch makes the value nullable). Identifiers are
`<METHOD> <path>: <what>` (`<path>: path removed` for a whole path), stable across runs.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import yaml

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = "docs/openapi.yaml"
CHANGELOG = "docs/changelog.md"
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
JSON_MEDIA_TYPE = "application/json"

#: each limit on input and how it tightens: an "upper" one by going down, a "lower" one by going up
_BOUNDS = {
    "maxLength": "upper",
    "maximum": "upper",
    "maxItems": "upper",
    "maxProperties": "upper",
    "minLength": "lower",
    "minimum": "lower",
    "minItems": "lower",
    "minProperties": "lower",
}
_EXACT = ("pattern", "multipleOf")


def load(text: str) -> dict:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader, the C one when built


# --- the narrowing detector ---------------------------------------------------------------------


@dataclass
class Shape:
    """What a schema allows, normalized: `types` None means any type."""

    types: frozenset | None = None
    format: str | None = None
    nullable: bool = False
    enum: frozenset | None = None
    properties: dict = field(default_factory=dict)
    required: frozenset = frozenset()
    items: dict | None = None
    additional: object = None  # None: not stated; True/False; or a schema
    constraints: dict = field(default_factory=dict)
    ref: str | None = None


def _enum_value(value) -> str:
    return json.dumps(value, sort_keys=True)


class _Document:
    def __init__(self, document: dict):
        self.document = document

    def resolve(self, node):
        """Follows local `$ref`s; returns (the node, the last reference followed)."""
        ref = None
        seen = set()
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            if ref in seen or not ref.startswith("#/"):
                return {}, ref
            seen.add(ref)
            target = self.document
            for token in ref[2:].split("/"):
                part = token.replace("~1", "/").replace("~0", "~")
                target = target.get(part, {}) if isinstance(target, dict) else {}
            node = target
        return (node if isinstance(node, dict) else {}), ref

    def shape(self, schema) -> Shape:
        schema, ref = self.resolve(schema)
        shape = Shape(ref=ref, nullable=bool(schema.get("nullable")))
        declared = schema.get("type")
        if isinstance(declared, list):  # OpenAPI 3.1: a list of types, "null" among them
            shape.nullable = shape.nullable or "null" in declared
            declared = [kind for kind in declared if kind != "null"]
            shape.types = frozenset(declared) or None
        elif declared == "null":
            shape.nullable = True
        elif declared:
            shape.types = frozenset([declared])
        elif "properties" in schema:
            shape.types = frozenset(["object"])
        elif "items" in schema:
            shape.types = frozenset(["array"])
        shape.format = schema.get("format")
        if "enum" in schema:
            values = schema["enum"] or []
            shape.nullable = shape.nullable or None in values
            shape.enum = frozenset(_enum_value(value) for value in values if value is not None)
        shape.properties = dict(schema.get("properties") or {})
        shape.required = frozenset(schema.get("required") or ())
        shape.items = schema.get("items")
        if "additionalProperties" in schema:
            shape.additional = schema["additionalProperties"]
        shape.constraints = {
            key: schema[key] for key in (*_BOUNDS, *_EXACT, "uniqueItems") if key in schema
        }
        for key in ("exclusiveMaximum", "exclusiveMinimum"):
            if key in schema:
                shape.constraints[key] = schema[key]
        for part in schema.get("allOf") or ():
            self._merge_all_of(shape, self.shape(part))
        alternatives = [*schema.get("oneOf", ()), *schema.get("anyOf", ())]
        if alternatives:
            self._merge_union(shape, [self.shape(branch) for branch in alternatives])
        return shape

    @staticmethod
    def _merge_all_of(shape: Shape, part: Shape) -> None:
        # every part must hold: the value is the intersection; drf-spectacular uses allOf to
        # wrap one $ref with nullable/readOnly, so the outer `nullable` stands as well
        if part.types is not None:
            shape.types = part.types if shape.types is None else shape.types & part.types
        shape.format = shape.format or part.format
        shape.nullable = shape.nullable or part.nullable
        if part.enum is not None:
            shape.enum = part.enum if shape.enum is None else shape.enum & part.enum
        shape.properties = {**part.properties, **shape.properties}
        shape.required = shape.required | part.required
        shape.items = shape.items or part.items
        if shape.additional is None:
            shape.additional = part.additional
        shape.constraints = {**part.constraints, **shape.constraints}
        shape.ref = shape.ref or part.ref

    @staticmethod
    def _merge_union(shape: Shape, branches: list[Shape]) -> None:
        # a branch that only admits null makes the value nullable; the others are a union
        values = []
        for branch in branches:
            if branch.types is None and branch.enum == frozenset() and branch.nullable:
                shape.nullable = True
            else:
                values.append(branch)
        if not values:
            return
        shape.nullable = shape.nullable or any(branch.nullable for branch in values)
        if shape.types is None and all(branch.types is not None for branch in values):
            shape.types = frozenset().union(*(branch.types for branch in values))
        if shape.enum is None and all(branch.enum is not None for branch in values):
            shape.enum = frozenset().union(*(branch.enum for branch in values))
        formats = {branch.format for branch in values}
        if shape.format is None and len(formats) == 1:
            shape.format = formats.pop()
        for branch in values:
            for name, schema in branch.properties.items():
                shape.properties.setdefault(name, schema)
            shape.items = shape.items or branch.items
        if not shape.required:
            shape.required = frozenset.intersection(*(branch.required for branch in values))
        if len(values) == 1:
            shape.constraints = {**values[0].constraints, **shape.constraints}
            shape.ref = shape.ref or values[0].ref


def _covered(kinds: frozenset, by: frozenset) -> bool:
    return all(kind in by or (kind == "integer" and "number" in by) for kind in kinds)


def _type_name(shape: Shape) -> str:
    kinds = "|".join(sorted(shape.types)) if shape.types is not None else "any"
    return f"{kinds}({shape.format})" if shape.format else kinds


class _Site(NamedTuple):
    """Where a schema sits: the operation, what holds it, and who sends the value."""

    where: str
    label: str
    request: bool  # the client sends it; otherwise the client reads it


class _Comparison:
    def __init__(self, old: dict, new: dict):
        self.old = _Document(old)
        self.new = _Document(new)
        self.found: list[str] = []

    def report(self, where: str, what: str) -> None:
        self.found.append(f"{where}: {what}")

    # paths and operations

    def run(self) -> list[str]:
        old_paths = self.old.document.get("paths") or {}
        new_paths = self.new.document.get("paths") or {}
        for path, old_path_item in old_paths.items():
            if path not in new_paths:
                self.report(path, "path removed")
                continue
            old_item, _ = self.old.resolve(old_path_item)
            new_item, _ = self.new.resolve(new_paths[path])
            for method in HTTP_METHODS:
                if method not in old_item:
                    continue
                where = f"{method.upper()} {path}"
                if method not in new_item:
                    self.report(where, "operation removed")
                    continue
                self.operation(where, old_item, new_item, method)
        return self.found

    def operation(self, where: str, old_item: dict, new_item: dict, method: str) -> None:
        old_op, new_op = old_item[method], new_item[method]
        self.parameters(where, self._parameters(self.old, old_item, old_op), new_item, new_op)
        self.request_body(where, old_op.get("requestBody"), new_op.get("requestBody"))
        self.responses(where, old_op.get("responses") or {}, new_op.get("responses") or {})

    @staticmethod
    def _parameters(document: _Document, item: dict, operation: dict) -> dict:
        found = {}
        for declared in [*item.get("parameters", ()), *operation.get("parameters", ())]:
            parameter, _ = document.resolve(declared)
            location, name = parameter.get("in", ""), parameter.get("name", "")
            key = (location, name.lower() if location == "header" else name)
            found[key] = parameter
        return found

    def parameters(self, where: str, old: dict, new_item: dict, new_op: dict) -> None:
        new = self._parameters(self.new, new_item, new_op)
        for key, parameter in old.items():
            label = f"{key[0]} parameter {parameter.get('name')}"
            if key not in new:
                self.report(where, f"{label} removed")
                continue
            if new[key].get("required") and not parameter.get("required"):
                self.report(where, f"{label} made required")
            site = _Site(where, label, request=True)
            self.schema(site, [], parameter.get("schema"), new[key].get("schema"))
        for key, parameter in new.items():
            if key not in old and parameter.get("required"):
                self.report(where, f"required {key[0]} parameter {parameter.get('name')} added")

    def request_body(self, where: str, old, new) -> None:
        old, _ = self.old.resolve(old) if old else (None, None)
        new, _ = self.new.resolve(new) if new else (None, None)
        if old is None:
            if new is not None and new.get("required"):
                self.report(where, "request body added as required")
            return
        if new is None:
            self.report(where, "request body removed")
            return
        if new.get("required") and not old.get("required"):
            self.report(where, "request body made required")
        new_content = new.get("content") or {}
        for media_type, old_media in (old.get("content") or {}).items():
            if media_type not in new_content:
                self.report(where, f"request body {media_type} removed")
                continue
            label = "request" if media_type == JSON_MEDIA_TYPE else f"request {media_type}"
            old_schema = old_media.get("schema")
            new_schema = new_content[media_type].get("schema")
            self.schema(_Site(where, label, request=True), [], old_schema, new_schema)

    def responses(self, where: str, old: dict, new: dict) -> None:
        new_by_status = {str(status): answer for status, answer in new.items()}
        for old_status, old_declared in old.items():
            status = str(old_status)
            if status not in new_by_status:
                self.report(where, f"answer {status} removed")
                continue
            old_answer, _ = self.old.resolve(old_declared)
            new_answer, _ = self.new.resolve(new_by_status[status])
            new_headers = {name.lower() for name in new_answer.get("headers") or {}}
            for name in old_answer.get("headers") or {}:
                if name.lower() not in new_headers:
                    self.report(where, f"answer {status} header {name} removed")
            new_content = new_answer.get("content") or {}
            for media_type, old_media in (old_answer.get("content") or {}).items():
                if media_type not in new_content:
                    self.report(where, f"answer {status} {media_type} removed")
                    continue
                label = f"answer {status}"
                if media_type != JSON_MEDIA_TYPE:
                    label = f"{label} {media_type}"
                old_schema = old_media.get("schema")
                new_schema = new_content[media_type].get("schema")
                self.schema(_Site(where, label, request=False), [], old_schema, new_schema)

    # schemas

    def schema(self, site: _Site, trail: list[str], old, new, stack=frozenset()) -> None:
        """Compares what a value may be. `request`: the client sends it (narrowing is refusing
        what was accepted); otherwise the client reads it (narrowing is sending what was not
        promised, or no longer sending what was)."""
        where, label, request = site
        if old is None or new is None:
            if old is not None and request is False:
                self.report(where, self._subject(label, trail) + " schema removed")
            return
        old_shape, new_shape = self.old.shape(old), self.new.shape(new)
        if old_shape.ref and new_shape.ref:
            key = (old_shape.ref, new_shape.ref)
            if key in stack:
                return
            stack = stack | {key}
        subject = self._subject(label, trail)
        if self._type_changed(old_shape, new_shape, request):
            self.report(where, f"{subject} type {_type_name(old_shape)} -> {_type_name(new_shape)}")
            return
        if request and old_shape.nullable and not new_shape.nullable:
            self.report(where, f"{subject} no longer takes null")
        if not request and new_shape.nullable and not old_shape.nullable:
            self.report(where, f"{subject} may now be null")
        self._enum(where, subject, old_shape, new_shape, request)
        if request:
            self._constraints(where, subject, old_shape, new_shape)
        self._properties(site, trail, old_shape, new_shape, stack)
        if old_shape.items is not None and new_shape.items is not None:
            trail_items = [*trail[:-1], f"{trail[-1]}[]"] if trail else ["[]"]
            self.schema(site, trail_items, old_shape.items, new_shape.items, stack)

    @staticmethod
    def _subject(label: str, trail: list[str]) -> str:
        if not trail:
            return label if "parameter" in label.split() else f"{label} body"
        return f"{label} field {'.'.join(trail)}"

    @staticmethod
    def _type_changed(old: Shape, new: Shape, request: bool) -> bool:
        accepted, offered = (new, old) if request else (old, new)
        # request: the new schema must take every type the old one did; answer: the new one may
        # send only types the old one promised
        if accepted.types is not None and (
            offered.types is None or not _covered(offered.types, accepted.types)
        ):
            return True
        if old.format == new.format:
            return False
        if request:
            return new.format is not None  # a format added or changed refuses values
        return old.format is not None  # a promised format dropped or changed

    def _enum(self, where, subject, old: Shape, new: Shape, request: bool) -> None:
        if old.enum is not None and new.enum is not None:
            for value in sorted(old.enum - new.enum):
                self.report(where, f"{subject} enum value {value} removed")
        elif request and old.enum is None and new.enum is not None:
            values = ", ".join(sorted(new.enum))
            self.report(where, f"{subject} limited to enum [{values}]")

    def _constraints(self, where, subject, old: Shape, new: Shape) -> None:
        for key, kind in _BOUNDS.items():
            before, after = old.constraints.get(key), new.constraints.get(key)
            if after is None or before == after:
                continue
            if before is None:
                self.report(where, f"{subject} {key} {after} added")
            elif (kind == "upper" and after < before) or (kind == "lower" and after > before):
                direction = "lowered" if kind == "upper" else "raised"
                self.report(where, f"{subject} {key} {direction} from {before} to {after}")
        for key in _EXACT:
            before, after = old.constraints.get(key), new.constraints.get(key)
            if after is None or before == after:
                continue
            if key == "multipleOf" and before and after and before % after == 0:
                continue  # a finer step still takes every old value
            what = "added" if before is None else "changed"
            self.report(where, f"{subject} {key} {what}: {after}")
        for key in ("exclusiveMaximum", "exclusiveMinimum"):
            before, after = old.constraints.get(key), new.constraints.get(key)
            if after is True and before is not True:
                self.report(where, f"{subject} {key} added")
        if new.constraints.get("uniqueItems") and not old.constraints.get("uniqueItems"):
            self.report(where, f"{subject} uniqueItems added")

    def _properties(self, site: _Site, trail, old: Shape, new: Shape, stack) -> None:
        where, label, request = site

        def field_subject(name):
            return self._subject(label, [*trail, name])

        for name, old_schema in old.properties.items():
            if name not in new.properties:
                self.report(where, f"{field_subject(name)} removed")
                continue
            if not request and name in old.required and name not in new.required:
                self.report(where, f"{field_subject(name)} made optional")
            self.schema(site, [*trail, name], old_schema, new.properties[name], stack)
        if request:
            for name in sorted(new.required - old.required):
                what = "made required" if name in old.properties else "added as required"
                self.report(where, f"{field_subject(name)} {what}")
            if old.additional not in (None, False) and new.additional is False:
                self.report(where, f"{self._subject(label, trail)} no longer takes extra keys")
        if isinstance(old.additional, dict) and isinstance(new.additional, dict):
            self.schema(site, [*trail, "*"], old.additional, new.additional, stack)


def narrowings(old: dict, new: dict) -> list[str]:
    """Every change from `old` to `new` that can break a client following `old`."""
    return _Comparison(old, new).run()


# --- the changelog rule -------------------------------------------------------------------------


def missing_from_changelog(identifiers: list[str], changelog: str) -> list[str]:
    """The identifiers that no changelog line names in backticks followed by a reason."""
    missing = []
    for identifier in identifiers:
        token = f"`{identifier}`"
        if not any(
            token in line and line.split(token, 1)[1].strip(" \t-:;,.\u2013\u2014")
            for line in changelog.splitlines()
        ):
            missing.append(identifier)
    return missing


# --- the repository: generating, publishing, history --------------------------------------------


def generate() -> str:
    """The document the code describes now, exactly as `make openapi` writes it."""
    with tempfile.TemporaryDirectory() as directory:
        target = Path(directory) / "openapi.yaml"
        subprocess.run(  # noqa: S603 - our own manage.py, with the running interpreter
            [sys.executable, "manage.py", "spectacular", "--validate", "--file", str(target)],
            cwd=ROOT,
            check=True,
        )
        return target.read_text()


def _git(*arguments: str, cwd: Path) -> str:
    return subprocess.run(  # noqa: S603
        ["git", *arguments],  # noqa: S607 - git from PATH, as every developer runs it
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def published_history(root: Path = ROOT, path: str = PUBLISHED) -> list[tuple[str, str]]:
    """(label, text) of each committed version of the published document, oldest first, along
    the first-parent line (the history the main branch lived), then the working tree's when it
    differs from the last commit."""
    try:
        commits = _git("log", "--first-parent", "--format=%h", "--", path, cwd=root).split()
    except (OSError, subprocess.CalledProcessError):
        print("openapi: no git history here; only the generated document is checked.")
        commits = []
    versions = []
    for commit in reversed(commits):
        try:
            text = _git("show", f"{commit}:{path}", cwd=root)
        except subprocess.CalledProcessError:
            continue  # the file was deleted in that commit
        if not versions or versions[-1][1] != text:
            versions.append((commit, text))
    working = root / path
    if working.exists():
        text = working.read_text()
        if not versions or versions[-1][1] != text:
            versions.append(("working tree", text))
    return versions


def unexplained_history(versions: list[tuple[str, str]], changelog: str) -> list[str]:
    """Narrowings between successive published versions that the changelog does not name."""
    problems = []
    previous = None
    for label, text in versions:
        document = load(text)
        if previous is not None:
            previous_label, previous_document = previous
            missing = missing_from_changelog(narrowings(previous_document, document), changelog)
            problems.extend(f"{name}   ({previous_label} -> {label})" for name in missing)
        previous = (label, document)
    return problems


HOW_TO_PUBLISH = f"""\
To publish a change that narrows the API on purpose (for example, the document now states a
limit the service always enforced): run `make openapi`, then name each narrowing in
{CHANGELOG} under the coming release, in backticks and followed by why, e.g.
  - `GET /api/x: answer 200 field foo removed`: it was never filled.
A change that breaks clients otherwise comes as a new API version beside this one
(docs/contract.md "Versioning and compatibility")."""


def against_published(published: str, generated: str) -> list[str]:
    """Why the generated document cannot stand as it is beside the published one."""
    narrowed = narrowings(load(published), load(generated))
    if narrowed:
        listed = "\n".join(f"  {identifier}" for identifier in narrowed)
        return [
            f"The generated OpenAPI document narrows the published {PUBLISHED}:\n{listed}\n"
            + HOW_TO_PUBLISH
        ]
    if generated != published:
        return [
            f"The generated OpenAPI document differs from the published {PUBLISHED} (compatible "
            "changes only): run `make openapi` and commit it."
        ]
    return []


def check(root: Path = ROOT) -> list[str]:
    """Every reason the repository's published document is not in order; empty when it is."""
    published_path = root / PUBLISHED
    if not published_path.exists():
        return [f"{PUBLISHED} is missing: run `make openapi` and commit it."]
    failures = against_published(published_path.read_text(), generate())
    changelog_path = root / CHANGELOG
    changelog = changelog_path.read_text() if changelog_path.exists() else ""
    unexplained = unexplained_history(published_history(root), changelog)
    if unexplained:
        listed = "\n".join(f"  {problem}" for problem in unexplained)
        failures.append(
            f"These narrowings of the published {PUBLISHED} are not named in {CHANGELOG}:\n"
            f"{listed}\n" + HOW_TO_PUBLISH
        )
    return failures


def write(root: Path = ROOT) -> None:
    """Publishes the generated document and says what it narrows against the last commit."""
    generated = generate()
    published_path = root / PUBLISHED
    published_path.write_text(generated)
    print(f"Wrote {PUBLISHED}.")
    versions = published_history(root)
    if len(versions) >= 2 and versions[-1][0] == "working tree":
        changelog_path = root / CHANGELOG
        changelog = changelog_path.read_text() if changelog_path.exists() else ""
        narrowed = narrowings(load(versions[-2][1]), load(generated))
        missing = missing_from_changelog(narrowed, changelog)
        if missing:
            listed = "\n".join(f"  - `{identifier}`: <why>" for identifier in missing)
            print(f"It narrows the last committed one; name these in {CHANGELOG}:\n{listed}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="publish the generated document")
    options = parser.parse_args(argv)
    if options.write:
        write()
        return 0
    failures = check()
    for failure in failures:
        print(failure, file=sys.stderr, end="\n\n")
    if not failures:
        print(f"openapi: {PUBLISHED} is current and every narrowing is in {CHANGELOG}.")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
