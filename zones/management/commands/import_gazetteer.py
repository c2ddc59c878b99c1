"""`manage.py import_gazetteer <org-slug> <file.csv>`: loads an organization's gazetteer (contract
"Geocoding and resolve-zone"), all or nothing."""

import io
import os
import sys

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from tenants.models import Organization
from zones import services


class Command(BaseCommand):
    help = (
        "Imports known addresses and places (CSV in UTF-8 with header"
        " address,postal_code,locality,lat,lng) into an organization's gazetteer, all or nothing:"
        " a file with any bad row imports nothing and every problem is printed with its line"
        " number (exit code 1). Re-importing an address updates it. Files over"
        " GAZETTEER_IMPORT_MAX_BYTES are refused. Use - to read standard input."
    )

    def add_arguments(self, parser):
        parser.add_argument("organization", help="The organization's slug")
        parser.add_argument("file", help="Path of the CSV file (UTF-8), or - for stdin")

    def handle(self, *args, organization: str, file: str, **options):
        target = Organization.objects.filter(slug=organization).first()
        if target is None:
            raise CommandError(f"Organization {organization} not found")
        stream = self._open(file)
        try:
            report = services.gazetteer_import_csv(
                organization_id=target.id,
                stream=stream,
                on_progress=lambda step: self.stdout.write(f"{step.rows} rows read"),
            )
        finally:
            stream.close()
        if report.refused:
            for problem in report.problems:
                self.stderr.write(problem)
            raise CommandError(report.summary())
        self.stdout.write(
            self.style.SUCCESS(
                f"Done: {report.imported} places imported from {report.rows} rows "
                f"into {target.name}"
            )
        )

    def _open(self, file: str):
        """The file as bytes, refused before it is parsed when over the size limit (standard
        input: at most one byte past the limit is read)."""
        limit = settings.GAZETTEER_IMPORT_MAX_BYTES
        if file == "-":
            data = sys.stdin.buffer.read(limit + 1)
            size, stream = len(data), io.BytesIO(data)
        else:
            try:
                stream = open(file, "rb")  # noqa: SIM115 - closed by handle()
                size = os.fstat(stream.fileno()).st_size
            except OSError as exc:
                raise CommandError(f"Cannot read {file}: {exc.strerror}") from None
        problem = services.gazetteer_size_problem(size)
        if problem is not None:
            stream.close()
            raise CommandError(f"Import refused, nothing was imported: {problem}")
        return stream
