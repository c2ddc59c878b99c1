"""The contract's zone and geocoding errors (contract "Errors", contract "Errors", "Geocoding and
resolve-zone")."""

from delivery.errors import BadRequest, Conflict, NotFound, ServiceUnavailable, ValidationFailed


class ZoneNotFound(NotFound):
    default_message = "Zone not found"


class ZoneNameNotFound(NotFound):
    def __init__(self, name: str):
        super().__init__(f"Zone {name} not found")


class NoZoneForAddress(NotFound):
    default_message = "No delivery zone found for the given address"


class PolygonInvalid(ValidationFailed):
    """A 400 whose messages each name the field the polygon came in (`geodata`)."""


class ZoneNameTaken(ValidationFailed):
    def __init__(self, name: str):
        super().__init__([f"name {name} is already taken"])


class ZoneSlugTaken(ValidationFailed):
    def __init__(self, slug: str):
        super().__init__([f"slug {slug} is already taken"])


class ExportFormatInvalid(ValidationFailed):
    def __init__(self):
        super().__init__(["format must be json or csv"])


class GeocoderUnavailable(ServiceUnavailable):
    default_message = "Geocoding service unavailable"


class ZoneInUse(Conflict):
    def __init__(self, name: str):
        super().__init__(f"Zone {name} is in use and cannot be deleted; disable it instead")


class ZoneHasSlotTemplates(Conflict):
    def __init__(self, name: str):
        super().__init__(
            f"Zone {name} has slot templates; delete them before making it a dispatch zone"
        )


class ZoneBlackedOut(BadRequest):
    """A booking on a blackout date of its zone."""

    def __init__(self, *, name: str, day):
        super().__init__(f"Zone {name} takes no deliveries on {day.isoformat()}")


class BlackoutNotFound(NotFound):
    default_message = "Blackout not found"


class BlackoutDateTaken(Conflict):
    def __init__(self, day):
        super().__init__(f"This zone already has a blackout on {day.isoformat()}")
