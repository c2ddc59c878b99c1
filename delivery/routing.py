"""URL helpers: every path answers with and without a trailing slash, with no redirect (contract
"Conventions")."""

from django.urls import path


def route(pattern: str, view, name: str | None = None) -> list:
    """Returns the pattern and its slashed twin; only the bare one appears in the OpenAPI doc."""
    bare = pattern.rstrip("/")
    return [path(bare, view, name=name), path(f"{bare}/", view)]


def drop_slashed_duplicates(endpoints):
    """drf-spectacular preprocessing hook: hides the trailing-slash twins from the schema."""
    return [
        (path_, path_regex, method, callback)
        for path_, path_regex, method, callback in endpoints
        if not path_.endswith("/")
    ]
