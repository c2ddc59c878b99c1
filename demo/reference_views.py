"""Reference endpoints for benchmarks (docs/performance.md), served only when BENCH_ENDPOINTS is on.

They give the ceilings that the real endpoints are measured against in the same run.
"""

from django.conf import settings
from django.db import connection, transaction
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from delivery.errors import NotFound
from tenants.api_bases import ApiKeyApiView
from tenants.models import Organization


def _require_bench_mode() -> None:
    if not settings.BENCH_ENDPOINTS:
        raise NotFound()


class HelloApi(APIView):
    authentication_classes: list = []

    @extend_schema(exclude=True)
    def get(self, request):
        _require_bench_mode()
        return Response({"hello": "world"})


class HelloWithKeyApi(ApiKeyApiView):
    @extend_schema(exclude=True)
    def get(self, request):
        _require_bench_mode()
        return Response({"hello": request.auth.organization_id})


class DbReadApi(APIView):
    authentication_classes: list = []

    @extend_schema(exclude=True)
    def get(self, request):
        _require_bench_mode()
        organization = Organization.objects.order_by("created_at").values("id", "slug").first()
        return Response({"organization": organization and str(organization["id"])})


# A table of our own for the write references, outside the app's models and migrations.
_CREATE_TABLE = (
    "CREATE TABLE IF NOT EXISTS bench_reference_row (id bigserial PRIMARY KEY, "
    "counter bigint NOT NULL DEFAULT 0, created_at timestamptz DEFAULT now())"
)


_bench_table_ready = False


def _ensure_bench_table(cursor) -> None:
    """Once per process: the references are one INSERT (or one locked UPDATE) in a transaction,
    not a catalog lookup more. `make bench` creates the table before the load, since concurrent
    first CREATEs race on the catalog."""
    global _bench_table_ready  # noqa: PLW0603 - a per-process flag
    if not _bench_table_ready:
        cursor.execute(_CREATE_TABLE)
        _bench_table_ready = True


class _BenchRowWriteApi(APIView):
    """A write reference: `write` runs in one transaction on the reference table and returns the
    body of the 201."""

    authentication_classes: list = []

    @extend_schema(exclude=True)
    def post(self, request):
        _require_bench_mode()
        with transaction.atomic(), connection.cursor() as cursor:
            _ensure_bench_table(cursor)
            body = self.write(cursor)
        return Response(body, status=201)

    def write(self, cursor) -> dict:
        raise NotImplementedError


class DbWriteApi(_BenchRowWriteApi):
    def write(self, cursor) -> dict:
        cursor.execute("INSERT INTO bench_reference_row (counter) VALUES (0) RETURNING id")
        return {"id": cursor.fetchone()[0]}


class BookHotApi(_BenchRowWriteApi):
    def write(self, cursor) -> dict:
        cursor.execute(
            "INSERT INTO bench_reference_row (id, counter) VALUES (1, 0) ON CONFLICT DO NOTHING"
        )
        cursor.execute("SELECT counter FROM bench_reference_row WHERE id = 1 FOR UPDATE")
        counter = cursor.fetchone()[0]
        cursor.execute("UPDATE bench_reference_row SET counter = counter + 1 WHERE id = 1")
        return {"counter": counter + 1}
