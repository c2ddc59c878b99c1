"""The contract's zone and geocoding errors (contract "Errors", contract "Errors", "Geocoding and
resolve-zone")."""

from delivery.errors import BadRequest, Conflict, NotFound, ServiceUnavailable, ValidationFailed


class ZoneNotFound(NotFound):
    code = "zone_not_found"
    default_message = "Zone not found"


class ZoneNameNotFound(ZoneNotFound):
    """The zone a request names by name (partner `zoneName`): the same code as by id."""

    code = ZoneNotFound.code

    def __init__(self, name: str):
        super().__init__(f"Zone {name} not found")


class NoZoneForAddress(NotFound):
    code = "no_zone_for_address"
    default_message = "No delivery zone found for the given address"


class PolygonInvalid(ValidationFailed):
    """A 400 whose messages each name the field the polygon came in (`geodata`). The zone
    serializers report it among the body's other field problems, so it shares their code."""

    code = ValidationFailed.code


class ZoneNameTaken(ValidationFailed):
    code = "zone_name_taken"

    def __init__(self, name: str):
        super().__init__([f"name {name} is already taken"])


class ZoneSlugTaken(ValidationFailed):
    code = "zone_slug_taken"

    def __init__(self, slug: str):
        super().__init__([f"slug {slug} is already taken"])


class ExportFormatInvalid(ValidationFailed):
    code = "export_format_invalid"

    def __init__(self):
        super().__init__(["format must be json or csv"])


class GeocoderUnavailable(ServiceUnavailable):
    code = "geocoder_unavailable"
    default_message = "Geocoding service unavailable"


class ZoneInUse(Conflict):
    code = "zone_in_use"

    def __init__(self, name: str):
        super().__init__(f"Zone {name} is in use and cannot be deleted; disable it instead")


class ZoneHasSlotTemplates(Conflict):
    code = "zone_has_slot_templates"

    def __init__(self, name: str):
        super().__init__(
            f"Zone {name} has slot templates; delete them before making it a dispatch zone"
        )


class ZoneBlackedOut(BadRequest):
    """A booking on a blackout date of its zone."""

    code = "zone_blacked_out"

    def __init__(self, *, name: str, day):
        super().__init__(f"Zone {name} takes no deliveries on {day.isoformat()}")


class BlackoutNotFound(NotFound):
    code = "blackout_not_found"
    default_message = "Blackout not found"


class BlackoutDateTaken(Conflict):
    code = "blackout_date_taken"

    def __init__(self, day):
        super().__init__(f"This zone already has a blackout on {day.isoformat()}")
