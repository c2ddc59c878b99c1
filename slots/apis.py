"""Slot endpoints: public availability (any key) and the management API's slot policy and
templates (contract "Slots and windows", "Management API")."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from delivery.errors import ValidationFailed
from delivery.fields import parse_uuid
from delivery.schema import errors, query_date, query_number
from delivery.serializers import valid_serializer
from slots import openapi_examples as examples
from slots import selectors
from slots.serializers import (
    BulkAvailabilityOutput,
    BulkAvailabilityQueryInput,
    DayAvailabilityOutput,
    DayAvailabilityQueryInput,
    SingleDayAvailabilityOutput,
    SlotAvailabilityOutput,
    SlotPolicyInput,
    SlotPolicyOutput,
    SlotTemplateInput,
    SlotTemplateOutput,
    SlotTemplateSeedInput,
)
from slots.services import templates as template_services
from tenants.api_bases import ApiKeyApiView, ManagementApiView
from zones import selectors as zone_selectors

PUBLIC = ["public"]

_ZONE_PARAMETERS = [
    OpenApiParameter(
        "zoneId", OpenApiTypes.UUID, description="Required when lat/lng are absent; wins"
    ),
    query_number("lat", bound=90, description="-90 to 90, with lng"),
    query_number("lng", bound=180, description="-180 to 180, with lat"),
]


def _availability(request, zone_query, first, last) -> selectors.ZoneAvailability:
    organization_id = request.auth.organization_id
    zone_id = selectors.availability_zone_id(
        organization_id=organization_id,
        zone_id=zone_query.zone_id,
        lat=zone_query.lat,
        lng=zone_query.lng,
    )
    return selectors.availability_get(
        organization_id=organization_id, zone_id=zone_id, first=first, last=last
    )


class BulkAvailabilityApi(ApiKeyApiView):
    @extend_schema(
        tags=PUBLIC,
        parameters=[
            *_ZONE_PARAMETERS,
            query_date("startDate", required=True),
            query_date(
                "endDate", required=True, description="After startDate, at most 31 days later"
            ),
        ],
        summary="List slot availability over a date range",
        responses={200: BulkAvailabilityOutput, **errors(400, 401, 404)},
        examples=examples.BULK_AVAILABILITY,
    )
    def get(self, request):
        """Every date from startDate to endDate (both included, at most 31 days apart) with the
        zone's slots ascending by start, each with its capacity, `booked` (active orders and live
        slot holds), `available`, `bookable` and, when not bookable, `unbookableReason`; a date
        without slots has an empty array (contract: Slots and windows). The zone is `zoneId`, or
        the smallest enabled slot zone containing `lat`/`lng`. A shop's checkout calls it to offer
        delivery slots.

        Any active `X-API-Key` of the organization, whatever its platform (401 `Missing X-API-Key
        header` or `Invalid API key`).

        Errors:

        - 400 `Either (lat, lng) or zoneId must be provided`, `zoneId must be a UUID`, `startDate
          must be before endDate`, `Date range must not exceed 31 days`

        - 404 `Zone not found`, or `No active zones found for the given coordinates`"""
        serializer = valid_serializer(BulkAvailabilityQueryInput, request.query_params)
        query = serializer.validated_data
        availability = _availability(request, query.zone, query.start_date, query.end_date)
        day_output = DayAvailabilityOutput()
        return Response(
            {
                "polygonId": str(availability.zone.id),
                "polygonName": availability.zone.name,
                "dates": [day_output.to_representation(day) for day in availability.days],
            }
        )


class DayAvailabilityApi(ApiKeyApiView):
    @extend_schema(
        tags=PUBLIC,
        parameters=[*_ZONE_PARAMETERS, query_date("date", required=True)],
        summary="List slot availability on one date",
        responses={200: SingleDayAvailabilityOutput, **errors(400, 401, 404)},
        examples=examples.DAY_AVAILABILITY,
    )
    def get(self, request):
        """The slots of one date in the zone, ascending by start, with the same entries as the
        date-range form (contract: Slots and windows); the zone is `zoneId`, or the smallest
        enabled slot zone containing `lat`/`lng`.

        Any active `X-API-Key` of the organization, whatever its platform (401 `Missing X-API-Key
        header` or `Invalid API key`).

        Errors:

        - 400 `date query parameter is required (format: YYYY-MM-DD)`, `Either (lat, lng) or zoneId
          must be provided`, `zoneId must be a UUID`

        - 404 `Zone not found`, or `No active zones found for the given coordinates`"""
        serializer = valid_serializer(DayAvailabilityQueryInput, request.query_params)
        query = serializer.validated_data
        availability = _availability(request, query.zone, query.date, query.date)
        (day,) = availability.days
        entry = SlotAvailabilityOutput()
        return Response(
            {
                "polygonId": str(availability.zone.id),
                "polygonName": availability.zone.name,
                "date": day.date.isoformat(),
                "slots": [entry.to_representation(slot) for slot in day.slots],
            }
        )


# ----- management API -----


class SlotPolicyApi(ManagementApiView):
    @extend_schema(
        summary="Read the slot policy",
        responses={200: SlotPolicyOutput, **errors(401, 404)},
        examples=examples.POLICY_READ,
    )
    def get(self, request, org_id):
        """The organization's slot defaults: time zone, slot duration, booking cutoff, vehicle
        capacity and the default pickup address of ERP orders.

        For an organization admin with a bearer token (401 `Invalid or missing token`); another
        organization: 404 `Organization not found`."""
        policy = template_services.slot_policy_get_or_create(
            organization_id=self.get_organization().id
        )
        return Response(SlotPolicyOutput(policy).data)

    @extend_schema(
        summary="Update the slot policy",
        request=SlotPolicyInput,
        responses={200: SlotPolicyOutput, **errors(400, 401, 404)},
        examples=examples.POLICY_UPDATE,
    )
    def put(self, request, org_id):
        """Replaces the fields given and keeps the others; answers the whole policy. Existing
        templates keep their values: the policy is what new templates and the seed start from.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 400 naming each invalid field (an unknown time zone, a duration outside 1 to 1440 minutes,
          an empty `defaultVehicleCapacity`)

        - 404 `Organization not found`"""
        organization = self.get_organization()
        serializer = valid_serializer(SlotPolicyInput, request.data)
        policy = template_services.slot_policy_update(
            organization_id=organization.id, **serializer.service_arguments()
        )
        return Response(SlotPolicyOutput(policy).data)


def _slot_zone(*, organization, zone_id):
    return zone_selectors.zone_get(organization_id=organization.id, zone_id=zone_id)


class SlotTemplatesApi(ManagementApiView):
    @extend_schema(
        parameters=[OpenApiParameter("zoneId", OpenApiTypes.UUID, description="One zone only")],
        summary="List slot templates",
        responses={200: SlotTemplateOutput(many=True), **errors(400, 401, 404)},
        examples=examples.TEMPLATE_LIST,
    )
    def get(self, request, org_id):
        """The organization's slot templates (the weekly slots that availability and ERP bookings
        use), of every zone or of `zoneId` only, each with its derived `capacity` and the cutoff
        rule it uses.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 400 `zoneId must be a UUID`

        - 404 `Organization not found`"""
        organization = self.get_organization()
        zone_id = request.query_params.get("zoneId") or None
        if zone_id is not None and parse_uuid(zone_id) is None:
            raise ValidationFailed(["zoneId must be a UUID"])
        templates = selectors.slot_template_list(organization_id=organization.id, zone_id=zone_id)
        return Response(SlotTemplateOutput(templates, many=True).data)

    @extend_schema(
        summary="Create a slot template",
        request=SlotTemplateInput,
        responses={201: SlotTemplateOutput, **errors(400, 401, 404, 409)},
        examples=examples.TEMPLATE_CREATE,
    )
    def post(self, request, org_id):
        """Creates a weekly slot on a zone of purpose `slot` or `both`: `dayOfWeek` (0 Sunday to 6
        Saturday), `startTime`, and `endTime` or `durationMinutes` (the policy's duration
        otherwise); a cutoff as `cutoffMinutes` before the start or `cutoffDayBeforeAt` (HH:MM on
        the day before); `vehicleCapacity`, whose sum of `count x maxOrdersPerVehicle` is the
        slot's capacity. Emits `erp.slots.updated`.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 400 listing every problem (`zoneId is required`, `Provide either cutoffMinutes or
          cutoffDayBeforeAt, not both`, `endTime must be after startTime`, `zoneId: slot templates
          can only be assigned to zones of purpose slot or both`)

        - 404 `Organization not found`, `Zone not found`

        - 409 `A slot template of this zone already starts at <HH:MM> on day <n>`"""
        organization = self.get_organization()
        serializer = valid_serializer(SlotTemplateInput, request.data)
        template = template_services.slot_template_create(
            organization_id=organization.id,
            zone=_slot_zone(organization=organization, zone_id=serializer.validated_data["zoneId"]),
            **serializer.service_arguments(),
        )
        return Response(SlotTemplateOutput(template).data, status=201)


class SlotTemplateDetailApi(ManagementApiView):
    def _template(self, template_id):
        return selectors.slot_template_get(
            organization_id=self.get_organization().id, template_id=template_id
        )

    @extend_schema(
        summary="Read a slot template",
        responses={200: SlotTemplateOutput, **errors(401, 404)},
        examples=examples.TEMPLATE_READ,
    )
    def get(self, request, org_id, template_id):
        """One slot template of the organization, as listed.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 404 `Organization not found`, 404 `Slot not found` (unknown, deleted or another
          organization's template)"""
        return Response(SlotTemplateOutput(self._template(template_id)).data)

    @extend_schema(
        summary="Update a slot template",
        request=SlotTemplateInput,
        responses={200: SlotTemplateOutput, **errors(400, 401, 404, 409)},
        examples=examples.TEMPLATE_UPDATE,
    )
    def patch(self, request, org_id, template_id):
        """Changes the fields given and keeps the others; giving one cutoff rule replaces the
        other. Orders already booked keep their slot. Emits `erp.slots.updated`.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 400 naming each invalid field, as on create

        - 404 `Organization not found`, `Slot not found`, `Zone not found`

        - 409 when another template of the zone starts at the same time on the same day"""
        template = self._template(template_id)
        serializer = valid_serializer(SlotTemplateInput, request.data, partial=True)
        arguments = serializer.service_arguments()
        if "zoneId" in serializer.validated_data:
            arguments["zone"] = _slot_zone(
                organization=self.get_organization(), zone_id=serializer.validated_data["zoneId"]
            )
        template = template_services.slot_template_update(template=template, **arguments)
        return Response(SlotTemplateOutput(template).data)

    @extend_schema(summary="Delete a slot template", responses={204: None, **errors(401, 404)})
    def delete(self, request, org_id, template_id):
        """Takes the template out of use: it offers no more slots, and orders booked on it keep
        theirs. Answers 204 with no body. Emits `erp.slots.updated`.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 404 `Organization not found`, `Slot not found`"""
        template_services.slot_template_delete(template=self._template(template_id))
        return Response(status=204)


class SlotTemplatesSeedApi(ManagementApiView):
    @extend_schema(
        request=SlotTemplateSeedInput,
        summary="Seed slot templates from the slot policy",
        responses={201: SlotTemplateOutput(many=True), **errors(400, 401, 404)},
        examples=examples.TEMPLATE_SEED,
    )
    def post(self, request, org_id):
        """Creates templates from the slot policy, back to back from `firstStart` to `lastEnd`
        with the policy's duration, cutoff and vehicle capacity: every slot zone (`zoneIds`),
        days 0-4 (`daysOfWeek`), 08:00 to 20:00 unless given. Slots that exist already are
        skipped; the answer lists the templates created (an empty list when there were none to
        create). Emits `erp.slots.updated`.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 400 `firstStart must be before lastEnd` and each invalid field

        - 404 `Organization not found`, `Zone not found`"""
        organization = self.get_organization()
        serializer = valid_serializer(SlotTemplateSeedInput, request.data)
        data = serializer.validated_data
        zones = None
        if "zoneIds" in data:
            zones = [
                _slot_zone(organization=organization, zone_id=zone_id)
                for zone_id in dict.fromkeys(data["zoneIds"])
            ]
        created = template_services.slot_templates_seed(
            organization_id=organization.id,
            zones=zones,
            days_of_week=data.get("daysOfWeek"),
            first_start=data.get("firstStart"),
            last_end=data.get("lastEnd"),
        )
        return Response(SlotTemplateOutput(created, many=True).data, status=201)
