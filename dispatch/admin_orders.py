"""The orders' admin as dispatch extends it: assigning selected orders to a driver puts each at the
end of that driver's route of its day, with an ETA (contract "Dispatch", "Manual assignment")."""

from django.contrib import admin

from dispatch.services import routes_of_day
from integrations.admin import OrderAdmin
from integrations.models import Order


class DispatchOrderAdmin(OrderAdmin):
    def order_move(self, **move) -> None:
        # The base's keyword arguments, as routes_of_day.order_move takes them.
        routes_of_day.order_move(**move)


def register() -> None:
    """Serves orders with `DispatchOrderAdmin` in place of integrations' own."""
    if admin.site.is_registered(Order):
        admin.site.unregister(Order)
    admin.site.register(Order, DispatchOrderAdmin)
