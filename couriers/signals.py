"""A driver's token issued anew or revoked ends the old one in every process at once: the key
cache, which courier authentication reads through (tenants/keycache.py), is invalidated on
commit, whichever path changed the row (services, Django admin, a bare `save()`/`delete()`)."""

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from couriers.models import DriverAccessToken
from tenants import keycache


@receiver(post_save, sender=DriverAccessToken, dispatch_uid="keycache-driver-token-saved")
@receiver(post_delete, sender=DriverAccessToken, dispatch_uid="keycache-driver-token-deleted")
def _driver_token_changed(sender, instance, **kwargs):
    keycache.invalidate_on_commit()
