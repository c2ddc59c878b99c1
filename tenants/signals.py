"""Changes that can refuse an API key or a driver's token, or move a webhook destination,
invalidate the key cache once they commit, whichever path made them: the provisioning and
management APIs, Django admin forms and actions, the services, or a bare `save()`/`delete()`
(`update()`: `KeyCacheQuerySet`; the tokens' own rows: couriers/signals.py)."""

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from tenants import keycache
from tenants.models import ApiKey, Driver, Organization


@receiver(post_save, sender=ApiKey, dispatch_uid="keycache-api-key-saved")
def _api_key_saved(sender, instance, created, **kwargs):
    # A new key too: it may be a webhook destination that was cached as missing.
    keycache.invalidate_on_commit()


@receiver(post_save, sender=Organization, dispatch_uid="keycache-organization-saved")
@receiver(post_save, sender=Driver, dispatch_uid="keycache-driver-saved")
def _organization_or_driver_saved(sender, instance, created, **kwargs):
    if not created:  # a new organization or driver has no key or token cached yet
        keycache.invalidate_on_commit()


@receiver(post_delete, sender=ApiKey, dispatch_uid="keycache-api-key-deleted")
@receiver(post_delete, sender=Organization, dispatch_uid="keycache-organization-deleted")
@receiver(post_delete, sender=Driver, dispatch_uid="keycache-driver-deleted")
def _deleted(sender, instance, **kwargs):
    keycache.invalidate_on_commit()
