"""Zone endpoints: resolve-zone, the partner zones export and the management API's zones CRUD."""

import json
from collections.abc import Iterator

from django.conf import settings
from django.http import StreamingHttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.response import Response

from delivery.schema import errors
from delivery.serializers import valid_serializer
from tenants.api_bases import ApiKeyApiView, IntegrationApiView, ManagementApiView
from zones import selectors, services
from zones.errors import ExportFormatInvalid
from zones.geometry import exterior_lat_lng
from zones.serializers import (
    ResolvedZoneOutput,
    ResolveZoneInput,
    ZoneBlackoutInput,
    ZoneBlackoutOutput,
    ZoneExportOutput,
    ZoneInput,
    ZoneOutput,
    ZonesExportOutput,
)


class ResolveZoneApi(ApiKeyApiView):
    @extend_schema(
        tags=["promises"],
        request=ResolveZoneInput,
        responses={200: ResolvedZoneOutput, **errors(400, 401, 404, 503)},
    )
    def post(self, request):
        """Geocodes the address and returns its zone with a confidence (contract: Geocoding and
        resolve-zone). Any active key of the organization."""
        serializer = valid_serializer(ResolveZoneInput, request.data)
        resolved = selectors.zone_resolve(
            organization_id=request.auth.organization_id,
            address=serializer.validated_data["address"],
        )
        return Response(ResolvedZoneOutput(resolved).data)


class _IgnoreFormatQuery(BaseContentNegotiation):
    """`format` is this endpoint's own parameter (json or csv), not DRF's renderer override,
    and a CSV client's `Accept: text/csv` must not turn into a 406: the view picks the body."""

    def select_parser(self, request, parsers):
        return parsers[0] if parsers else None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


EXPORT_CSV_HEADER = ("name", "slug", "isActive", "polygon", "metadata")


def _compact_json(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _csv_field(text: str) -> str:
    """RFC 4180: quoted only when it holds a comma, a quote or a line break."""
    return _quoted(text) if any(char in text for char in ',"\r\n') else text


def zones_export_csv_lines(zones) -> Iterator[str]:
    """The export's CSV (contract): a header row, one row per zone, CRLF line ends.

    `polygon` (a JSON array of [lat, lng] pairs) and `metadata` (a JSON object) are always
    quoted with doubled inner quotes; `name` and `slug` are quoted when they need it.
    """
    yield ",".join(EXPORT_CSV_HEADER) + "\r\n"
    for zone in zones:
        polygon = _compact_json([[lat, lng] for lat, lng in exterior_lat_lng(zone.geodata)])
        fields = (
            _csv_field(zone.name),
            _csv_field(zone.slug),
            "true" if zone.enabled else "false",
            _quoted(polygon),
            _quoted(_compact_json(zone.metadata)),
        )
        yield ",".join(fields) + "\r\n"


class ZonesExportApi(IntegrationApiView):
    content_negotiation_class = _IgnoreFormatQuery

    @extend_schema(
        tags=["partner"],
        parameters=[
            OpenApiParameter("format", str, enum=["json", "csv"], description="Default json")
        ],
        responses={
            (200, "application/json"): ZonesExportOutput,
            (200, "text/csv"): OpenApiResponse(
                OpenApiTypes.STR,
                description="Header row name,slug,isActive,polygon,metadata; attachment "
                "<SERVICE_NAME>-zones.csv",
            ),
            **errors(400, 401, 403),
        },
    )
    def get(self, request):
        """Every zone of purpose dispatch or both; disabled ones with isActive false (contract:
        Slots and windows)."""
        export_format = request.query_params.get("format", "json")
        if export_format not in ("json", "csv"):
            raise ExportFormatInvalid()
        organization_id = request.auth.organization_id
        zones = selectors.zone_export_list(organization_id=organization_id)
        if export_format == "csv":
            response = StreamingHttpResponse(
                (line.encode() for line in zones_export_csv_lines(zones.iterator(chunk_size=200))),
                content_type="text/csv; charset=utf-8",
            )
            filename = f"{settings.SERVICE_NAME}-zones.csv"
            response["Content-Disposition"] = f'attachment; filename="{filename}"'
            return response
        return Response(
            {
                "format": "json",
                "organizationId": str(organization_id),
                "generatedAt": ZonesExportOutput()
                .fields["generatedAt"]
                .to_representation(timezone.now()),
                "zones": ZoneExportOutput(zones, many=True).data,
            }
        )


class ZonesApi(ManagementApiView):
    @extend_schema(responses={200: ZoneOutput(many=True), **errors(401, 404)})
    def get(self, request, org_id):
        zones = selectors.zone_list(organization_id=self.get_organization().id)
        return Response(ZoneOutput(zones, many=True).data)

    @extend_schema(request=ZoneInput, responses={201: ZoneOutput, **errors(400, 401, 404)})
    def post(self, request, org_id):
        organization = self.get_organization()
        serializer = valid_serializer(ZoneInput, request.data)
        zone = services.zone_create(
            organization_id=organization.id, **serializer.service_arguments()
        )
        return Response(ZoneOutput(zone).data, status=201)


class ZoneDetailApi(ManagementApiView):
    def _zone(self, zone_id):
        return selectors.zone_get(organization_id=self.get_organization().id, zone_id=zone_id)

    @extend_schema(responses={200: ZoneOutput, **errors(401, 404)})
    def get(self, request, org_id, zone_id):
        return Response(ZoneOutput(self._zone(zone_id)).data)

    @extend_schema(request=ZoneInput, responses={200: ZoneOutput, **errors(400, 401, 404)})
    def patch(self, request, org_id, zone_id):
        zone = self._zone(zone_id)
        serializer = valid_serializer(ZoneInput, request.data, partial=True)
        zone = services.zone_update(zone=zone, **serializer.service_arguments())
        return Response(ZoneOutput(zone).data)

    @extend_schema(responses={204: None, **errors(401, 404, 409)})
    def delete(self, request, org_id, zone_id):
        services.zone_delete(zone=self._zone(zone_id))
        return Response(status=204)


class ZoneBlackoutsApi(ManagementApiView):
    def _zone(self, zone_id):
        return selectors.zone_get(organization_id=self.get_organization().id, zone_id=zone_id)

    @extend_schema(responses={200: ZoneBlackoutOutput(many=True), **errors(401, 404)})
    def get(self, request, org_id, zone_id):
        """The zone's blackout dates (no deliveries), ascending."""
        blackouts = selectors.zone_blackout_list(zone=self._zone(zone_id))
        return Response(ZoneBlackoutOutput(blackouts, many=True).data)

    @extend_schema(
        request=ZoneBlackoutInput, responses={201: ZoneBlackoutOutput, **errors(400, 401, 404, 409)}
    )
    def post(self, request, org_id, zone_id):
        """A date (YYYY-MM-DD, the zone's own calendar) on which the zone takes no deliveries: its
        slots and partner windows are not bookable. 409 when the zone has a blackout on that date
        already."""
        zone = self._zone(zone_id)
        serializer = valid_serializer(ZoneBlackoutInput, request.data)
        blackout = services.zone_blackout_create(
            zone=zone,
            day=serializer.validated_data["date"],
            reason=serializer.validated_data["reason"],
        )
        return Response(ZoneBlackoutOutput(blackout).data, status=201)


class ZoneBlackoutDetailApi(ManagementApiView):
    @extend_schema(responses={204: None, **errors(401, 404)})
    def delete(self, request, org_id, zone_id, blackout_id):
        zone = selectors.zone_get(organization_id=self.get_organization().id, zone_id=zone_id)
        services.zone_blackout_delete(
            blackout=selectors.zone_blackout_get(zone=zone, blackout_id=blackout_id)
        )
        return Response(status=204)
