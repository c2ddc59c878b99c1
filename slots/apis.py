"""Slot endpoints: public availability (any key) and the management API's slot policy and
templates (contract "Slots and windows", "Management API")."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from delivery.errors import ValidationFailed
from delivery.fields import parse_uuid
from delivery.schema import errors
from delivery.serializers import valid_serializer
from slots import selectors, services
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
from tenants.api_bases import ApiKeyApiView, ManagementApiView
from zones import selectors as zone_selectors

PUBLIC = ["public"]

_ZONE_PARAMETERS = [
    OpenApiParameter(
        "zoneId", OpenApiTypes.UUID, description="Required when lat/lng are absent; wins"
    ),
    OpenApiParameter("lat", OpenApiTypes.NUMBER, description="-90 to 90, with lng"),
    OpenApiParameter("lng", OpenApiTypes.NUMBER, description="-180 to 180, with lat"),
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
            OpenApiParameter("startDate", OpenApiTypes.DATE, required=True),
            OpenApiParameter(
                "endDate", OpenApiTypes.DATE, required=True, description="After startDate"
            ),
        ],
        responses={200: BulkAvailabilityOutput, **errors(400, 401, 404)},
    )
    def get(self, request):
        """Every date from startDate to endDate (both included, at most 31 days apart) with its
        slots ascending by start; a date without slots has an empty array."""
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
        parameters=[*_ZONE_PARAMETERS, OpenApiParameter("date", OpenApiTypes.DATE, required=True)],
        responses={200: SingleDayAvailabilityOutput, **errors(400, 401, 404)},
    )
    def get(self, request):
        """The slots of one date, ascending by start."""
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
    @extend_schema(responses={200: SlotPolicyOutput, **errors(401, 404)})
    def get(self, request, org_id):
        policy = services.slot_policy_get_or_create(organization_id=self.get_organization().id)
        return Response(SlotPolicyOutput(policy).data)

    @extend_schema(
        request=SlotPolicyInput, responses={200: SlotPolicyOutput, **errors(400, 401, 404)}
    )
    def put(self, request, org_id):
        organization = self.get_organization()
        serializer = valid_serializer(SlotPolicyInput, request.data)
        policy = services.slot_policy_update(
            organization_id=organization.id, **serializer.service_arguments()
        )
        return Response(SlotPolicyOutput(policy).data)


def _slot_zone(*, organization, zone_id):
    return zone_selectors.zone_get(organization_id=organization.id, zone_id=zone_id)


class SlotTemplatesApi(ManagementApiView):
    @extend_schema(
        parameters=[OpenApiParameter("zoneId", OpenApiTypes.UUID, description="One zone only")],
        responses={200: SlotTemplateOutput(many=True), **errors(400, 401, 404)},
    )
    def get(self, request, org_id):
        organization = self.get_organization()
        zone_id = request.query_params.get("zoneId") or None
        if zone_id is not None and parse_uuid(zone_id) is None:
            raise ValidationFailed(["zoneId must be a UUID"])
        templates = selectors.slot_template_list(organization_id=organization.id, zone_id=zone_id)
        return Response(SlotTemplateOutput(templates, many=True).data)

    @extend_schema(
        request=SlotTemplateInput, responses={201: SlotTemplateOutput, **errors(400, 401, 404, 409)}
    )
    def post(self, request, org_id):
        organization = self.get_organization()
        serializer = valid_serializer(SlotTemplateInput, request.data)
        template = services.slot_template_create(
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

    @extend_schema(responses={200: SlotTemplateOutput, **errors(401, 404)})
    def get(self, request, org_id, template_id):
        return Response(SlotTemplateOutput(self._template(template_id)).data)

    @extend_schema(
        request=SlotTemplateInput, responses={200: SlotTemplateOutput, **errors(400, 401, 404, 409)}
    )
    def patch(self, request, org_id, template_id):
        template = self._template(template_id)
        serializer = valid_serializer(SlotTemplateInput, request.data, partial=True)
        arguments = serializer.service_arguments()
        if "zoneId" in serializer.validated_data:
            arguments["zone"] = _slot_zone(
                organization=self.get_organization(), zone_id=serializer.validated_data["zoneId"]
            )
        template = services.slot_template_update(template=template, **arguments)
        return Response(SlotTemplateOutput(template).data)

    @extend_schema(responses={204: None, **errors(401, 404)})
    def delete(self, request, org_id, template_id):
        services.slot_template_delete(template=self._template(template_id))
        return Response(status=204)


class SlotTemplatesSeedApi(ManagementApiView):
    @extend_schema(
        request=SlotTemplateSeedInput,
        responses={201: SlotTemplateOutput(many=True), **errors(400, 401, 404)},
    )
    def post(self, request, org_id):
        """Creates templates from the slot policy: every slot zone, days 0-4, 08:00 to 20:00 unless
        given. Slots that exist already are skipped; the response lists the templates created."""
        organization = self.get_organization()
        serializer = valid_serializer(SlotTemplateSeedInput, request.data)
        data = serializer.validated_data
        zones = None
        if "zoneIds" in data:
            zones = [
                _slot_zone(organization=organization, zone_id=zone_id)
                for zone_id in dict.fromkeys(data["zoneIds"])
            ]
        created = services.slot_templates_seed(
            organization_id=organization.id,
            zones=zones,
            days_of_week=data.get("daysOfWeek"),
            first_start=data.get("firstStart"),
            last_end=data.get("lastEnd"),
        )
        return Response(SlotTemplateOutput(created, many=True).data, status=201)
