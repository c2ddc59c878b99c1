"""The public tracking page (HTML), served at the site root: /track/<token>."""

urlpatterns: list = []
