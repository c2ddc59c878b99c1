"""Idempotency-Key handling (contract "Orders"; Stripe and the IETF Idempotency-Key draft).

A key is scoped to its owner (the API key; for the courier API the driver, whose table
`couriers` passes in as its `KeyScope`) and kept 24 hours. The first request claims it by
inserting a row (unique per owner and key) before doing any work, so of any number of
concurrent requests with one key exactly one does the work. That request stores its response in
the same transaction as the work, so "order created" and "response stored" commit together.
Others answer 409 while it runs, replay the stored response once it is done, or 422 when their
body differs. A request that ends in an error releases its claim: nothing was created, and the
client may retry with the same key (Stripe keeps no result when a request failed validation).
"""

import hashlib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.db import connection, models, transaction
from django.utils import timezone

from delivery import retention
from integrations import statements
from integrations.errors import (
    IdempotencyKeyInProgress,
    IdempotencyKeyInvalid,
    IdempotencyKeyReused,
)
from integrations.models import IdempotencyKey, IdempotencyStatus

KEY_LIFETIME = timedelta(hours=24)
#: a claim not completed within this long belongs to a request that died (its transaction
#: rolled back, so it created nothing); a new request with the same key may take it over
CLAIM_LEASE = timedelta(seconds=60)
_CLAIM_ATTEMPTS = 3
MAX_KEY_LENGTH = 255


def idempotency_key_read(value: str | None) -> str | None:
    """The `Idempotency-Key` header's value (None when absent); 400 unless it is 1 to 255
    printable ASCII characters."""
    if value is None:
        return None
    if not 1 <= len(value) <= MAX_KEY_LENGTH or not value.isascii() or not value.isprintable():
        raise IdempotencyKeyInvalid()
    return value


@dataclass(frozen=True)
class KeyScope:
    """Whose keys a table holds: `model` has IdempotencyKey's columns, with `owner` (a foreign
    key) in place of `api_key`, unique with `key`."""

    model: type[models.Model]
    owner: str

    @property
    def owner_column(self) -> str:
        return f"{self.owner}_id"


API_KEYS = KeyScope(IdempotencyKey, "api_key")


@dataclass(frozen=True)
class Claim:
    id: int
    token: uuid.UUID


@dataclass(frozen=True)
class StoredResponse:
    status: int
    body: Any


@dataclass(frozen=True)
class IdempotentResult(StoredResponse):
    """The response to answer, and whether it is a stored one replayed."""

    replayed: bool


def request_fingerprint(*, method: str, path: str, body: Any) -> str:
    """SHA-256 of the request: method, path and the JSON body in canonical form (so key order
    and spacing do not make two equal bodies differ)."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(f"{method} {path}\n{canonical}".encode()).hexdigest()


def _insert_claim(*, scope: KeyScope, owner_id, key: str, fingerprint: str, now) -> Claim | None:
    """One statement, no transaction of its own, no error when the key is taken: the unique
    constraint decides who claims it (an ORM `create` would need BEGIN, a savepoint and an
    IntegrityError round trip for the same answer)."""
    token = uuid.uuid4()
    with connection.cursor() as cursor:
        cursor.execute(
            statements.idempotency_claim(scope.model._meta.db_table, scope.owner_column),
            [owner_id, key, fingerprint, IdempotencyStatus.IN_PROGRESS, token, now, now],
        )
        row = cursor.fetchone()
    return Claim(id=row[0], token=token) if row else None


def idempotency_claim(
    *,
    owner_id: UUID | str,
    key: str,
    fingerprint: str,
    scope: KeyScope = API_KEYS,
    on_used_key: Callable[[], None] | None = None,
) -> Claim | StoredResponse:
    """Claims `key` for this request, or answers what the earlier request with it decided.

    Returns a Claim (go ahead and do the work) or the StoredResponse to replay; raises 422 when
    the key was used with another body, 409 while the request that holds it is running.
    `on_used_key` runs once the key is found taken, before any of those answers (it may raise).
    """
    checked = on_used_key is None
    for _ in range(_CLAIM_ATTEMPTS):
        now = timezone.now()
        claim = _insert_claim(
            scope=scope, owner_id=owner_id, key=key, fingerprint=fingerprint, now=now
        )
        if claim is not None:
            return claim
        if not checked:
            on_used_key()
            checked = True
        rows = scope.model.objects
        existing = rows.filter(**{scope.owner_column: owner_id, "key": key}).first()
        if existing is None:
            continue  # released or expired meanwhile: claim it again
        if existing.created_at <= now - KEY_LIFETIME:
            # Expired but not yet swept: it no longer exists as far as clients can tell.
            rows.filter(pk=existing.pk, claim_token=existing.claim_token).delete()
            continue
        if existing.request_hash != fingerprint:
            raise IdempotencyKeyReused()
        if existing.status == IdempotencyStatus.COMPLETED:
            return StoredResponse(status=existing.response_status, body=existing.response_body)
        if existing.locked_at <= now - CLAIM_LEASE:
            token = uuid.uuid4()
            # Conditional UPDATE: of several requests taking over, one wins.
            taken = rows.filter(
                pk=existing.pk,
                status=IdempotencyStatus.IN_PROGRESS,
                claim_token=existing.claim_token,
            ).update(claim_token=token, locked_at=now)
            if taken:
                return Claim(id=existing.pk, token=token)
            continue
        raise IdempotencyKeyInProgress()
    raise IdempotencyKeyInProgress()


def idempotency_complete(
    *, claim: Claim, status: int, body: Any, scope: KeyScope = API_KEYS
) -> None:
    """Stores the response, in the transaction of the work it describes. A claim taken over
    meanwhile (this request outlived its lease) raises 409, which rolls the work back."""
    stored = scope.model.objects.filter(
        pk=claim.id, claim_token=claim.token, status=IdempotencyStatus.IN_PROGRESS
    ).update(
        status=IdempotencyStatus.COMPLETED,
        response_status=status,
        response_body=body,
        completed_at=timezone.now(),
    )
    if not stored:
        raise IdempotencyKeyInProgress()


def idempotency_release(*, claim: Claim, scope: KeyScope = API_KEYS) -> None:
    """Gives the key up after a failed request (nothing was created)."""
    scope.model.objects.filter(
        pk=claim.id, claim_token=claim.token, status=IdempotencyStatus.IN_PROGRESS
    ).delete()


def idempotent_run(
    *,
    owner_id: UUID | str,
    key: str,
    fingerprint: str,
    operation: Callable[[], tuple[int, Any]],
    scope: KeyScope = API_KEYS,
    on_used_key: Callable[[], None] | None = None,
) -> IdempotentResult:
    """Runs `operation` (returning status and JSON body) at most once per key of `owner_id` in
    `scope` (contract "Orders").

    The operation and the stored response commit in one transaction; any exception releases
    the claim and propagates. `on_used_key`: a check that must answer before a replay, 409 or
    422 (the operation makes it too, so a new key skips it); see idempotency_claim.
    """
    claimed = idempotency_claim(
        owner_id=owner_id, key=key, fingerprint=fingerprint, scope=scope, on_used_key=on_used_key
    )
    if isinstance(claimed, StoredResponse):
        return IdempotentResult(status=claimed.status, body=claimed.body, replayed=True)
    try:
        with transaction.atomic():
            status, body = operation()
            idempotency_complete(claim=claimed, status=status, body=body, scope=scope)
    except BaseException:
        idempotency_release(claim=claimed, scope=scope)
        raise
    return IdempotentResult(status=status, body=body, replayed=False)


def idempotency_keys_expire(
    *,
    now: datetime | None = None,
    scope: KeyScope = API_KEYS,
    batch_size: int | None = None,
    until: float | None = None,
) -> int:
    """The periodic task: deletes keys older than 24 hours, in batches that keep no request
    waiting (delivery/retention.py; a key a request holds is left for the next run). Returns how
    many."""
    cutoff = (now or timezone.now()) - KEY_LIFETIME
    expired = scope.model.objects.filter(created_at__lte=cutoff)
    return retention.delete_in_batches(
        expired, order_by="created_at", batch_size=batch_size, until=until
    ).removed
