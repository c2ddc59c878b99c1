"""Signed, expiring URLs of proof files (contract "Couriers", "Proof").

A URL carries the file's name in the `proofs` storage, signed with SECRET_KEY and the time it
was made (django.core.signing); the service serves the file (`ProofFileApi`) while the
signature holds and is at most 10 minutes old. There is no public path to the files at all.
"""

import mimetypes

from django.core import signing
from django.urls import reverse

from couriers.errors import ProofUrlExpired
from delivery.errors import NotFound

URL_LIFETIME_SECONDS = 600
_SALT = "couriers.proof-file"


def proof_file_token(name: str) -> str:
    return signing.dumps(name, salt=_SALT, compress=True)


def proof_file_url(request, name: str) -> str | None:
    """The absolute signed URL of the proof file `name` ("" or None: no URL)."""
    if not name:
        return None
    path = reverse("courier-proof-file", kwargs={"token": proof_file_token(name)})
    return request.build_absolute_uri(path) if request is not None else path


def proof_file_name(token: str) -> str:
    """The file a URL's token names; 403 once it is older than 10 minutes, 404 when it was not
    made by this service (or was altered)."""
    try:
        name = signing.loads(token, salt=_SALT, max_age=URL_LIFETIME_SECONDS)
    except signing.SignatureExpired:
        raise ProofUrlExpired() from None
    except signing.BadSignature:
        raise NotFound() from None
    if not isinstance(name, str) or not name:
        raise NotFound()
    return name


def proof_file_content_type(name: str) -> str:
    return mimetypes.guess_type(name)[0] or "application/octet-stream"
