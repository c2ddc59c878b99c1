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
from zones import openapi_examples as examples
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
        summary="Resolve an address to its delivery zone",
        request=ResolveZoneInput,
        responses={200: ResolvedZoneOutput, **errors(400, 401, 404, 503)},
        examples=examples.RESOLVE_ZONE,
    )
    def post(self, request):
        """Geocodes the address and answers the organization's zone for it, with a confidence and
        its evidence: `high` when precisely geocoded and more than 50 m inside a zone, `medium`
        within 50 m of a boundary or for an approximate geocode, `low` for the nearest active zone
        within 5 km (contract: Geocoding and resolve-zone). Checkout pages call it to promise
        delivery before an order exists.

        Any active `X-API-Key` of the organization, whatever its platform (401 `Missing X-API-Key
        header` or `Invalid API key`).

        Errors:

        - 400 `address is required`

        - 404 `No delivery zone found for the given address` (nothing within 5 km, or not
          geocodable)

        - 503 when the geocoder does not answer (`Geocoding service unavailable`)"""
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
        summary="Export the delivery zones",
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
        examples=examples.ZONES_EXPORT,
    )
    def get(self, request):
        """Every zone of purpose `dispatch` or `both` that partner orders can be placed in, with its
        polygon as a closed ring of `{lat, lng}`; disabled ones with `isActive: false` (contract:
        Orders). `format=csv` answers the same as a CSV attachment (header
        `name,slug,isActive,polygon,metadata`, polygon and metadata as quoted JSON). A partner
        platform calls it to draw or cache the areas it can send orders to.

        Errors:

        - 400 `format must be json or csv`"""
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
    @extend_schema(
        summary="List the organization's zones",
        responses={200: ZoneOutput(many=True), **errors(401, 404)},
        examples=examples.ZONE_LIST,
    )
    def get(self, request, org_id):
        """Every zone of the organization, of every purpose, enabled or not, with its GeoJSON
        polygon (`geodata`, `[lng, lat]` pairs), time zone, window capacity and `depot`
        (`null` when unset).

        For an organization admin with a bearer token (401 `Invalid or missing token`); an
        organization the admin does not manage: 404 `Organization not found`."""
        zones = selectors.zone_list(organization_id=self.get_organization().id)
        return Response(ZoneOutput(zones, many=True).data)

    @extend_schema(
        summary="Create a zone",
        request=ZoneInput,
        responses={201: ZoneOutput, **errors(400, 401, 404)},
        examples=examples.ZONE_CREATE,
    )
    def post(self, request, org_id):
        """Creates a zone from a name and a GeoJSON Polygon (a valid, non-self-intersecting ring
        of at least 4 `[lng, lat]` points; an open ring is closed). `purpose` is `dispatch`
        (partner orders), `slot` (slot templates) or `both`; `timezone` defaults to the slot
        policy's, `windowCapacity` to 20; `depot` `{address, lat, lng}` (address optional) is where
        dispatch routes of the zone start and end (contract "Dispatch"), `null` or left out: none.
        Emits `erp.polygon.updated`.

        For an organization admin with a bearer token (401 `Invalid or missing token`; another
        organization: 404 `Organization not found`).

        Errors:

        - 400 listing every problem of the body (`name is required`, `geodata is required`, an
          invalid polygon, an unknown time zone, a `purpose` not among the three, `name <name> is
          already taken`, `slug <slug> is already taken`)"""
        organization = self.get_organization()
        serializer = valid_serializer(ZoneInput, request.data)
        zone = services.zone_create(
            organization_id=organization.id, **serializer.service_arguments()
        )
        return Response(ZoneOutput(zone).data, status=201)


class ZoneDetailApi(ManagementApiView):
    def _zone(self, zone_id):
        return selectors.zone_get(organization_id=self.get_organization().id, zone_id=zone_id)

    @extend_schema(
        summary="Read a zone",
        responses={200: ZoneOutput, **errors(401, 404)},
        examples=examples.ZONE_READ,
    )
    def get(self, request, org_id, zone_id):
        """One zone of the organization, as listed.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 404 `Organization not found`, 404 `Zone not found` (unknown, malformed or another
          organization's id)"""
        return Response(ZoneOutput(self._zone(zone_id)).data)

    @extend_schema(
        summary="Update a zone",
        request=ZoneInput,
        responses={200: ZoneOutput, **errors(400, 401, 404, 409)},
        examples=examples.ZONE_UPDATE,
    )
    def patch(self, request, org_id, zone_id):
        """Changes the fields given and keeps the others (`depot: null` removes the depot);
        answers the whole zone. Disabling a
        zone (`enabled: false`) makes its slots unbookable; orders already placed keep their
        zone. Emits `erp.polygon.updated`.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 400 naming each invalid field, as on create

        - 404 `Organization not found`, 404 `Zone not found`

        - 409 `Zone <name> has slot templates; delete them before making it a dispatch zone`"""
        zone = self._zone(zone_id)
        serializer = valid_serializer(ZoneInput, request.data, partial=True)
        zone = services.zone_update(zone=zone, **serializer.service_arguments())
        return Response(ZoneOutput(zone).data)

    @extend_schema(summary="Delete a zone", responses={204: None, **errors(401, 404, 409)})
    def delete(self, request, org_id, zone_id):
        """Deletes the zone; answers 204 with no body. Emits `erp.polygon.updated`.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 404 `Organization not found`, 404 `Zone not found`

        - 409 `Zone <name> is in use and cannot be deleted; disable it instead` while orders or slot
          templates refer to it"""
        services.zone_delete(zone=self._zone(zone_id))
        return Response(status=204)


class ZoneBlackoutsApi(ManagementApiView):
    def _zone(self, zone_id):
        return selectors.zone_get(organization_id=self.get_organization().id, zone_id=zone_id)

    @extend_schema(
        summary="List a zone's blackout dates",
        responses={200: ZoneBlackoutOutput(many=True), **errors(401, 404)},
        examples=examples.BLACKOUT_LIST,
    )
    def get(self, request, org_id, zone_id):
        """The zone's blackout dates (days without deliveries), ascending, with their reasons.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 404 `Organization not found`, 404 `Zone not found`"""
        blackouts = selectors.zone_blackout_list(zone=self._zone(zone_id))
        return Response(ZoneBlackoutOutput(blackouts, many=True).data)

    @extend_schema(
        summary="Add a blackout date to a zone",
        request=ZoneBlackoutInput,
        responses={201: ZoneBlackoutOutput, **errors(400, 401, 404, 409)},
        examples=examples.BLACKOUT_CREATE,
    )
    def post(self, request, org_id, zone_id):
        """Marks a date (YYYY-MM-DD, the zone's own calendar) on which the zone takes no
        deliveries: its slots and partner windows of that date are not bookable, ERP bookings and
        partner orders for it are refused with 400 `Zone <name> takes no deliveries on <date>`;
        orders booked before keep their place.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 400 `date is required`, `reason is required`

        - 404 `Organization not found`, `Zone not found`

        - 409 `This zone already has a blackout on <date>`"""
        zone = self._zone(zone_id)
        serializer = valid_serializer(ZoneBlackoutInput, request.data)
        blackout = services.zone_blackout_create(
            zone=zone,
            day=serializer.validated_data["date"],
            reason=serializer.validated_data["reason"],
        )
        return Response(ZoneBlackoutOutput(blackout).data, status=201)


class ZoneBlackoutDetailApi(ManagementApiView):
    @extend_schema(summary="Remove a blackout date", responses={204: None, **errors(401, 404)})
    def delete(self, request, org_id, zone_id, blackout_id):
        """Removes the blackout: the zone takes deliveries on that date again. Answers 204 with no
        body.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 404 `Organization not found`, `Zone not found`, `Blackout not found`"""
        zone = selectors.zone_get(organization_id=self.get_organization().id, zone_id=zone_id)
        services.zone_blackout_delete(
            blackout=selectors.zone_blackout_get(zone=zone, blackout_id=blackout_id)
        )
        return Response(status=204)
