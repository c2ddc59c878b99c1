"""`manage.py import_gazetteer <org-slug> <file.csv>`: loads an organization's gazetteer (contract
"Geocoding and resolve-zone")."""

import sys

from django.core.management.base import BaseCommand, CommandError

from delivery.errors import ValidationFailed
from tenants.models import Organization
from zones import services


class Command(BaseCommand):
    help = (
        "Imports known addresses and places (CSV with header address,postal_code,locality,lat,lng)"
        " into an organization's gazetteer, printing progress every 1,000 rows. Re-importing an"
        " address updates it. Use - to read standard input."
    )

    def add_arguments(self, parser):
        parser.add_argument("organization", help="The organization's slug")
        parser.add_argument("file", help="Path of the CSV file (UTF-8), or - for stdin")

    def handle(self, *args, organization: str, file: str, **options):
        target = Organization.objects.filter(slug=organization).first()
        if target is None:
            raise CommandError(f"Organization {organization} not found")
        try:
            stream = (
                sys.stdin if file == "-" else open(file, encoding="utf-8-sig", newline="")  # noqa: SIM115
            )
        except OSError as exc:
            raise CommandError(f"Cannot read {file}: {exc.strerror}") from None
        try:
            report = services.gazetteer_import_csv(
                organization_id=target.id,
                text_stream=stream,
                on_progress=lambda step: self.stdout.write(
                    f"{step.rows} rows read, {step.imported} imported"
                ),
            )
        except ValidationFailed as exc:
            raise CommandError("; ".join(exc.message)) from None
        except UnicodeDecodeError:
            raise CommandError(f"{file} is not UTF-8 text") from None
        finally:
            if stream is not sys.stdin:
                stream.close()
        for error in report.errors:
            self.stderr.write(error)
        self.stdout.write(
            self.style.SUCCESS(
                f"Done: {report.rows} rows read, {report.imported} imported, "
                f"{report.skipped} skipped into {target.name}"
            )
        )
