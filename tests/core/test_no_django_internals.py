"""No module of the service leans on Django's private parts (STYLE "Speed through supported
doors"): they change without notice between versions, and a change breaks them silently. The
ORM, `QuerySet.update`, `bulk_create`, `Manager.raw` and plain `cursor.execute` are the doors."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: not the service: the tests, the benchmarks and their tools, the virtualenv
NOT_SERVICE = {"tests", "bench", "scripts", "docs", "var"}

#: what each private part looks like in source, and what it is
PRIVATE_PARTS = {
    r"\bfrom_db\(": "Model.from_db: instances built by hand from rows",
    r"\bklass_info\b": "the compiler's klass_info",
    r"\bget_related_populators\b": "the ORM's related populators",
    r"\._state\.": "a model instance's _state",
    r"\brun_on_commit\b": "the connection's pending on_commit callbacks",
    r"\bsavepoint_ids\b": "the connection's savepoint ids",
    r"\bget_compiler\b": "the ORM's SQL compiler",
    r"\.ops\.compiler\(|\bSQLCompiler\b|\bdjango\.db\.models\.sql\b": "the ORM's SQL compiler",
    r"\.query\.(?!(?:split|strip|encode|lower|startswith)\b)\w+": "a queryset's Query object",
}


def _service_modules() -> list[Path]:
    """Every first-party module: the top-level modules and every package (an app, the
    composition root, any new app) but those that are not the service."""
    modules = list(ROOT.glob("*.py"))
    for package in sorted(ROOT.iterdir()):
        if (
            package.is_dir()
            and not package.name.startswith(".")
            and package.name not in NOT_SERVICE
            and (package / "__init__.py").exists()
        ):
            modules.extend(package.rglob("*.py"))
    return sorted(modules)


def test_the_scan_sees_every_app():
    packages = {path.relative_to(ROOT).parts[0] for path in _service_modules()}

    assert {"delivery", "tenants", "webhooks", "zones", "slots", "integrations"} <= packages
    assert {"service", "tracking", "provisioning", "demo"} <= packages
    assert not packages & NOT_SERVICE


def test_no_module_uses_djangos_private_parts():
    patterns = [(re.compile(pattern), what) for pattern, what in PRIVATE_PARTS.items()]
    found = [
        f"{path.relative_to(ROOT)}:{number}: {what}: {line.strip()}"
        for path in _service_modules()
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        for pattern, what in patterns
        if pattern.search(line)
    ]

    assert not found, "Django's private parts in use:\n" + "\n".join(found)
