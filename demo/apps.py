from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The top floor: what spans every app (the `demo` command, the bench reference endpoints).

    It may import any app; no app imports it (docs/architecture.md).
    """

    name = "demo"
