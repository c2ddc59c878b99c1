"""The courier API (`/api/courier/...`), drivers' access tokens and the proof reads of the
management and partner APIs (contract "Couriers")."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.exceptions import ParseError, UnsupportedMediaType
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

from couriers import openapi_examples as examples
from couriers import selectors
from couriers.api_bases import CourierApiView
from couriers.serializers import AccessTokenOutput, PhotoOutput, RouteOutput, RouteQuery
from couriers.services import photos as photo_services
from couriers.services import tokens as token_services
from delivery.schema import errors, query_date
from delivery.serializers import valid_serializer
from tenants import selectors as tenant_selectors
from tenants.api_bases import ManagementApiView


class DriverAccessTokenApi(ManagementApiView):
    @extend_schema(
        summary="Issue a driver's access token",
        request=None,
        responses={201: AccessTokenOutput, **errors(401, 404)},
        examples=examples.ACCESS_TOKEN_ISSUE,
    )
    def post(self, request, org_id, driver_id):
        """Issues the token the driver's courier app signs in with (`Authorization: Bearer
        <token>` on `/api/courier/...`). The token is shown in this answer only (the service
        keeps a digest of it); a new token ends the driver's previous one at once. It works while
        the driver and the organization are active.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 404 `Organization not found`, `Driver not found`"""
        driver = tenant_selectors.driver_get(
            organization_id=self.get_organization().id, driver_id=driver_id
        )
        issued = token_services.driver_token_issue(driver=driver)
        return Response(AccessTokenOutput(issued).data, status=201)

    @extend_schema(
        summary="End a driver's access token",
        responses={
            204: OpenApiResponse(description="Ended (or there was none)"),
            **errors(401, 404),
        },
    )
    def delete(self, request, org_id, driver_id):
        """Ends the driver's access token at once: the courier app's next request answers 401
        `Invalid or missing token`. Answers 204 whether or not the driver had one.

        For an organization admin with a bearer token (401 `Invalid or missing token`).

        Errors:

        - 404 `Organization not found`, `Driver not found`"""
        driver = tenant_selectors.driver_get(
            organization_id=self.get_organization().id, driver_id=driver_id
        )
        token_services.driver_token_revoke(driver=driver)
        return Response(status=204)


class CourierRouteApi(CourierApiView):
    @extend_schema(
        summary="Read the driver's route of a day",
        parameters=[query_date("date", description="YYYY-MM-DD (default: today, zone time)")],
        responses={200: RouteOutput, **errors(400, 401)},
        examples=examples.ROUTE,
    )
    def get(self, request):
        """The calling driver's committed route of `date` (default: today in the driver's zone
        time): its stops in order with their ETA, window, address, recipient, notes, package,
        cash to collect (`codAmount`) and the barcode the parcel should carry
        (`expectedBarcode`). Times are in the zone's time with their offset. Without a
        committed route that day: `routeId` null and no stops.

        Errors:

        - 400 `date must be a valid date (format: YYYY-MM-DD)`

        - 401 `Invalid or missing token` (unknown or ended token, inactive driver or
          organization)"""
        query = valid_serializer(RouteQuery, request.query_params).validated_data
        route = selectors.driver_route(driver=self.driver, day=query.get("date"))
        return Response(RouteOutput(route, context={"tz": route.tz}).data)


class CourierPhotosApi(CourierApiView):
    parser_classes = [MultiPartParser]

    @extend_schema(
        summary="Upload a proof photo",
        request={
            "multipart/form-data": {
                "type": "object",
                "properties": {"photo": {"type": "string", "format": "binary"}},
                "required": ["photo"],
            }
        },
        responses={201: PhotoOutput, **errors(400, 401, 413)},
        examples=examples.PHOTO_UPLOAD,
    )
    def post(self, request):
        """Uploads a photo taken at the door (`multipart/form-data`, field `photo`: a JPEG or
        PNG of at most 5 MB). The service decodes it and stores it encoded again without any
        metadata (EXIF, GPS position included), and answers its `photoId`, which a `delivered`
        or `failed` event then names in `proof.photoIds`. The photo is read back only through
        the proof's signed, expiring URLs.

        Errors:

        - 400 `photo is required (a multipart file field)`, `photo must be at most 5 MB`,
          `photo must be a JPEG or PNG image` (anything that does not decode whole as one)

        - 401 `Invalid or missing token`

        - 413 a body over 6 MiB"""
        try:
            upload = request.FILES.get("photo")
        except (UnsupportedMediaType, ParseError):
            # Not a multipart body, or a broken one: not an image either (contract "Couriers").
            upload = None
        photo = photo_services.photo_upload(driver=self.driver, upload=upload)
        return Response(PhotoOutput(photo).data, status=201)
