"""Address → coordinates (contract "Geocoding and resolve-zone"), through the geocoder named by
`settings.GEOCODER`.

- `local` (default, no network): `"<lat>,<lng>"` literals are precise; otherwise the
  organization's gazetteer (`Place`): an exact match of the normalized address is precise, a
  match on a postal code or a locality found in the address only is approximate (the mean
  position of the places that share it).
- `nominatim`: a Nominatim server at `settings.NOMINATIM_URL`, through geopy, with a timeout.
  A result is precise when Nominatim places it at a house or building.

Every answer, a miss included, is cached in the Django cache (Redis). Gazetteer answers are
keyed by the organization's gazetteer version, which every import or edit replaces.
"""

import hashlib
import logging
import re
import unicodedata
import uuid
from dataclasses import asdict, dataclass
from typing import Protocol
from urllib.parse import urlsplit

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.db.models import Avg
from geopy.exc import GeopyError
from geopy.geocoders import Nominatim
from redis.exceptions import RedisError

from zones.errors import GeocoderUnavailable
from zones.models import Place
from zones.version_tokens import version_token_get

logger = logging.getLogger(__name__)

HIT_TTL_SECONDS = 24 * 3600
MISS_TTL_SECONDS = 3600
DEFAULT_NOMINATIM_TIMEOUT_SECONDS = 5.0
_MISS = {"miss": True}

_LITERAL = re.compile(r"^\s*([+-]?\d{1,3}(?:\.\d+)?)\s*,\s*([+-]?\d{1,3}(?:\.\d+)?)\s*$")


@dataclass(frozen=True)
class GeocodeResult:
    lat: float
    lng: float
    precise: bool


class Geocoder(Protocol):
    """What every geocoder offers: coordinates for an address, or None when unknown."""

    name: str

    def geocode(self, *, organization_id: str, address: str) -> GeocodeResult | None: ...

    def cache_scope(self, *, organization_id: str) -> str | None:
        """What the answer depends on besides the address (None: do not cache)."""


# ----- normalization (shared with the gazetteer import) -----


def normalize_text(text: str) -> str:
    """Case, accents, punctuation and spacing folded away: `Straße 1, Köln` → `strasse 1 koln`."""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(char for char in decomposed if not unicodedata.combining(char))
    words = re.sub(r"[\W_]+", " ", stripped.casefold())
    return " ".join(words.split())


def normalize_postal_code(text: str) -> str:
    """`SW1A 1AA` → `sw1a1aa`; `10115` → `10115`."""
    return normalize_text(text).replace(" ", "")


def parse_coordinates(address: str) -> tuple[float, float] | None:
    """(lat, lng) of an address written as `"<lat>,<lng>"` within range, else None."""
    match = _LITERAL.match(address)
    if not match:
        return None
    lat, lng = float(match.group(1)), float(match.group(2))
    if -90 <= lat <= 90 and -180 <= lng <= 180:
        return lat, lng
    return None


# ----- the local geocoder -----


def _gazetteer_version_key(organization_id: str) -> str:
    return f"zones:gazetteer-version:{organization_id}"


def gazetteer_changed(*, organization_id) -> None:
    """Drops cached gazetteer answers of an organization: now and after commit."""

    def replace() -> None:
        try:
            cache.set(_gazetteer_version_key(str(organization_id)), uuid.uuid4().hex, None)
        except (RedisError, OSError):
            logger.error("could not invalidate cached geocodes of %s", organization_id)

    replace()
    transaction.on_commit(replace)


class LocalGeocoder:
    name = "local"

    def cache_scope(self, *, organization_id: str) -> str | None:
        try:
            version = version_token_get(_gazetteer_version_key(organization_id), timeout=None)
        except (RedisError, OSError):
            return None
        return f"{organization_id}:{version}"

    def geocode(self, *, organization_id: str, address: str) -> GeocodeResult | None:
        key = normalize_text(address)
        if not key:
            return None
        exact = (
            Place.objects.filter(organization_id=organization_id, address_key=key)
            .values_list("lat", "lng")
            .first()
        )
        if exact is not None:
            return GeocodeResult(exact[0], exact[1], precise=True)
        tokens = key.split(" ")
        return self._by_postal_code(organization_id, tokens) or self._by_locality(
            organization_id, tokens
        )

    def _by_postal_code(self, organization_id: str, tokens: list[str]) -> GeocodeResult | None:
        # A postal code is one token with a digit (`10115`) or two joined (`sw1a 1aa`).
        candidates: dict[str, int] = {}
        for i in range(len(tokens)):
            for width in (1, 2):
                code = "".join(tokens[i : i + width])
                if i + width <= len(tokens) and len(code) >= 3 and any(c.isdigit() for c in code):
                    candidates[code] = i + width
        return self._mean_of(organization_id, "postal_code_key", candidates)

    def _by_locality(self, organization_id: str, tokens: list[str]) -> GeocodeResult | None:
        candidates: dict[str, int] = {}
        for i in range(len(tokens)):
            for width in range(1, 5):
                if i + width <= len(tokens):
                    name = " ".join(tokens[i : i + width])
                    if not name.replace(" ", "").isdigit():
                        candidates[name] = i + width
        return self._mean_of(organization_id, "locality_key", candidates)

    def _mean_of(
        self, organization_id: str, field: str, candidates: dict[str, int]
    ) -> GeocodeResult | None:
        """The mean position of the places of the best candidate found in the gazetteer.

        `candidates` maps each candidate to where it ends in the address; the one ending last
        wins (postal codes and localities close an address), then the longest.
        """
        if not candidates:
            return None
        rows = (
            Place.objects.filter(organization_id=organization_id, **{f"{field}__in": candidates})
            .values(field)
            .annotate(lat=Avg("lat"), lng=Avg("lng"))
            .order_by()
        )
        best = max(rows, key=lambda row: (candidates[row[field]], len(row[field])), default=None)
        if best is None:
            return None
        return GeocodeResult(best["lat"], best["lng"], precise=False)


# ----- Nominatim -----


class NominatimGeocoder:
    name = "nominatim"

    def cache_scope(self, *, organization_id: str) -> str | None:
        return hashlib.sha256(settings.NOMINATIM_URL.encode()).hexdigest()[:16]

    def _client(self) -> Nominatim:
        parts = urlsplit(settings.NOMINATIM_URL)
        return Nominatim(
            domain=parts.netloc + parts.path.rstrip("/"),
            scheme=parts.scheme or "https",
            user_agent=f"{settings.SERVICE_NAME}-geocoder/1",
            timeout=getattr(
                settings, "NOMINATIM_TIMEOUT_SECONDS", DEFAULT_NOMINATIM_TIMEOUT_SECONDS
            ),
        )

    def geocode(self, *, organization_id: str, address: str) -> GeocodeResult | None:
        try:
            location = self._client().geocode(address, exactly_one=True, addressdetails=True)
        except GeopyError as exc:
            logger.warning("nominatim failed: %s", exc.__class__.__name__)
            raise GeocoderUnavailable() from exc
        if location is None:
            return None
        return GeocodeResult(location.latitude, location.longitude, _is_precise(location.raw))


def _is_precise(raw: dict) -> bool:
    """A house or building: Nominatim's place_rank 30, or an address with a house number."""
    try:
        if int(raw.get("place_rank", 0)) >= 30:
            return True
    except (TypeError, ValueError):
        pass
    return bool((raw.get("address") or {}).get("house_number"))


GEOCODERS: dict[str, Geocoder] = {"local": LocalGeocoder(), "nominatim": NominatimGeocoder()}


def geocoder_get() -> Geocoder:
    try:
        return GEOCODERS[settings.GEOCODER]
    except KeyError:
        raise ImproperlyConfigured(
            f"GEOCODER must be one of {', '.join(GEOCODERS)}, not {settings.GEOCODER!r}"
        ) from None


# ----- the entry point -----


def geocode(*, organization_id, address: str) -> GeocodeResult | None:
    """Coordinates of `address` for an organization, or None when it cannot be geocoded.

    `"<lat>,<lng>"` literals are answered by every geocoder, precisely and without a lookup.
    Raises GeocoderUnavailable (503) when a remote geocoder cannot be reached.
    """
    literal = parse_coordinates(address)
    if literal is not None:
        return GeocodeResult(literal[0], literal[1], precise=True)
    organization_id = str(organization_id)
    geocoder = geocoder_get()
    scope = geocoder.cache_scope(organization_id=organization_id)
    cache_key = None
    if scope is not None:
        digest = hashlib.sha256(normalize_text(address).encode()).hexdigest()
        cache_key = f"geocode:{geocoder.name}:{scope}:{digest}"
        cached = _cache_read(cache_key)
        if cached is not None:
            return None if cached == _MISS else GeocodeResult(**cached)
    result = geocoder.geocode(organization_id=organization_id, address=address)
    if cache_key is not None:
        _cache_write(cache_key, result)
    return result


def _cache_read(key: str) -> dict | None:
    try:
        return cache.get(key)
    except (RedisError, OSError):
        return None


def _cache_write(key: str, result: GeocodeResult | None) -> None:
    try:
        if result is None:
            cache.set(key, _MISS, MISS_TTL_SECONDS)
        else:
            cache.set(key, asdict(result), HIT_TTL_SECONDS)
    except (RedisError, OSError):
        logger.warning("geocode cache unavailable")
