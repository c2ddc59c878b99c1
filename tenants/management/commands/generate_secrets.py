"""`manage.py generate_secrets`: fresh SECRET_KEY, FIELD_ENCRYPTION_KEY and PROVISIONING_SECRET
as `NAME=value` lines for an .env file (docs/operations.md "Configuration"). Here, in the lowest
app, because
the project package `delivery` is no app and Django finds commands only in apps."""

from django.core.management.base import BaseCommand

from delivery import secret_policy


class Command(BaseCommand):
    help = (
        "Prints a fresh strong SECRET_KEY, FIELD_ENCRYPTION_KEY and PROVISIONING_SECRET as "
        "NAME=value lines, ready for an .env file (e.g. `... generate_secrets >> .env`). "
        "Changing FIELD_ENCRYPTION_KEY later makes stored API keys and webhook secrets unreadable."
    )

    def handle(self, *args, **options):
        for name, value in secret_policy.generate().items():
            self.stdout.write(f"{name}={value}")
