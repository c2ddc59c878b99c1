"""The API's version on every answer, and the release the OpenAPI document states
(docs/contract.md "Versioning and compatibility").

`API-Version` names the contract an answer belongs to; it changes only with a breaking change,
which comes as a new version served beside this one. The release (pyproject.toml's version,
the OpenAPI document's `info.version`) moves with every change of the document, compatible or not.
"""

import tomllib
from pathlib import Path

API_VERSION_HEADER = "API-Version"
API_VERSION = "1"

_PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def release() -> str:
    """The release, from its one source: `[project] version` in pyproject.toml."""
    with _PYPROJECT.open("rb") as pyproject:
        return tomllib.load(pyproject)["project"]["version"]


class ApiVersionMiddleware:
    """Outermost, so every answer carries the header: views, the JSON error layer, Django's own
    refusals (a bad Host), static files, the admin and the tracking page alike."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response[API_VERSION_HEADER] = API_VERSION
        return response


_HEADER_DOC = {
    "schema": {"type": "string", "enum": [API_VERSION]},
    "description": "The API version this answer belongs to; it changes only with a breaking "
    "change, served beside this one (docs/contract.md).",
}


def declare_api_version_header(result, generator, request, public):
    """drf-spectacular postprocessing hook: every answer of every operation declares the
    `API-Version` header, once, as a component it refers to."""
    result.setdefault("components", {}).setdefault("headers", {})[API_VERSION_HEADER] = _HEADER_DOC
    reference = {"$ref": f"#/components/headers/{API_VERSION_HEADER}"}
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            for answer in operation.get("responses", {}).values():
                answer.setdefault("headers", {})[API_VERSION_HEADER] = reference
    return result
