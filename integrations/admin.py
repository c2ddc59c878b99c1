"""Orders in Django admin (contract "Management API"): scoped per organization, status history
inline, and
status changes only through `order_transition` (admin actions), never by editing the field."""

from collections.abc import Callable

from django import forms
from django.contrib import admin, messages

from delivery.errors import ApplicationError, NotFound
from delivery.fields import parse_uuid
from integrations.models import FailureReason, Order, OrderStatus, OrderStatusEvent
from integrations.services import orders as order_services
from integrations.services import sandbox
from tenants.admin_display import shortened, time_field, zone_period, zone_time
from tenants.admin_scoping import OrganizationScopedAdmin
from tenants.admin_site import administered_organization_ids
from tenants.models import Driver


def _order_timezone(order: Order) -> str | None:
    """An order's times are read in its zone's time; an order without a zone's in UTC."""
    return order.zone.timezone if order.zone_id else None


#: the order's datetimes, each shown in the order's zone time under a name of its own
ORDER_TIMES = {
    name: time_field(name, label, _order_timezone)
    for name, label in (
        ("delivery_window_start", "Delivery window start"),
        ("delivery_window_end", "Delivery window end"),
        ("held_until", "Held until"),
        ("released_at", "Released at"),
        ("created_at", "Created"),
        ("updated_at", "Updated"),
    )
}


class OrderStatusEventInline(admin.TabularInline):
    model = OrderStatusEvent
    extra = 0
    fields = ("when", "from_status", "to_status", "actor", "reason")
    readonly_fields = fields
    ordering = ("at", "id")
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_view_permission(self, request, obj=None) -> bool:
        # Whoever may see the order (OrderAdmin's scoping) may see its history.
        return True

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("order__zone")

    @admin.display(description="At")
    def when(self, event: OrderStatusEvent):
        return zone_time(event.at, _order_timezone(event.order))


class OrderActionForm(admin.helpers.ActionForm):
    driver_id = forms.CharField(
        required=False,
        label="Driver id (for Assign)",
        help_text="The id of an active driver of the order's organization",
    )
    reason = forms.CharField(required=False, max_length=500, label="Reason")
    failure_reason = forms.ChoiceField(
        required=False,
        choices=[("", "---------"), *FailureReason.choices],
        label="Failure reason (for Mark failed)",
    )


def _transition_action(to_status: str, description: str):
    def action(modeladmin, request, queryset):
        modeladmin.transition_selected(request, queryset, to_status)

    action.__name__ = f"transition_to_{to_status}"
    return admin.action(description=description)(action)


def _simulate_action(outcome: str, description: str):
    def action(modeladmin, request, queryset):
        modeladmin.simulate_selected(request, queryset, outcome)

    action.__name__ = f"simulate_{outcome}"
    return admin.action(description=description)(action)


@admin.register(Order)
class OrderAdmin(OrganizationScopedAdmin):
    list_display = (
        "reference",
        "status",
        "zone",
        "delivery_window",
        "driver",
        "created_at_shown",
        "organization",
    )
    list_filter = ("status", "family", "platform")
    list_select_related = ("zone", "driver", "organization")
    search_fields = ("external_ref", "tracking_token", "recipient_name")
    ordering = ("-created_at", "-id")
    date_hierarchy = "created_at"
    action_form = OrderActionForm
    inlines = (OrderStatusEventInline,)
    #: only the partner's note text and recipient details are editable; status moves by actions
    editable_fields = ("recipient_name", "recipient_phone", "notes")
    actions = (
        _transition_action(OrderStatus.DISPATCHING, "Release for dispatch (dispatching)"),
        _transition_action(OrderStatus.ASSIGNED, "Assign to driver (give driver id)"),
        _transition_action(OrderStatus.PICKED_UP, "Mark picked up"),
        _transition_action(OrderStatus.IN_TRANSIT, "Mark in transit"),
        _transition_action(OrderStatus.DELIVERED, "Mark delivered"),
        _transition_action(OrderStatus.FAILED, "Mark failed"),
        _transition_action(OrderStatus.CANCELLED, "Cancel"),
        _transition_action(OrderStatus.PENDING, "Return to pending"),
        _simulate_action(OrderStatus.DELIVERED, "Sandbox: simulate until delivered (test keys)"),
        _simulate_action(OrderStatus.FAILED, "Sandbox: simulate until failed (test keys)"),
    )

    delivery_window_start_shown = ORDER_TIMES["delivery_window_start"]
    delivery_window_end_shown = ORDER_TIMES["delivery_window_end"]
    held_until_shown = ORDER_TIMES["held_until"]
    released_at_shown = ORDER_TIMES["released_at"]
    created_at_shown = ORDER_TIMES["created_at"]
    updated_at_shown = ORDER_TIMES["updated_at"]

    @admin.display(description="External ref", ordering="external_ref")
    def reference(self, order: Order):
        return shortened(order.external_ref, 28)

    @admin.display(description="Delivery window", ordering="delivery_window_start")
    def delivery_window(self, order: Order):
        return zone_period(
            order.delivery_window_start, order.delivery_window_end, _order_timezone(order)
        )

    def get_fields(self, request, obj=None):
        return [self._shown_name(name) for name in self._concrete_field_names()]

    def get_readonly_fields(self, request, obj=None):
        return [
            self._shown_name(name)
            for name in self._concrete_field_names()
            if name not in self.editable_fields
        ]

    @staticmethod
    def _concrete_field_names() -> list[str]:
        return [field.name for field in Order._meta.get_fields() if field.concrete]

    @admin.display(description="Window load")
    def window_load_shown(self, order: Order):
        """The partner window counter the order holds a place in, in the zone's time."""
        load = order.window_load
        if load is None:
            return self.get_empty_value_display()
        window = zone_period(load.window_start, load.window_end, load.zone.timezone)
        return f"{window}: {load.booked} of {load.capacity} booked"

    @staticmethod
    def _shown_name(name: str) -> str:
        """A datetime field (ORDER_TIMES) and the window counter are shown in zone time by a
        display of their own; any other field as is."""
        return f"{name}_shown" if name in {*ORDER_TIMES, "window_load"} else name

    def has_add_permission(self, request) -> bool:
        # Orders come in through the integrations, which book capacity and write history.
        return False

    def transition_selected(self, request, queryset, to_status: str) -> None:
        driver = None
        if to_status == OrderStatus.ASSIGNED and request.POST.get("driver_id", "").strip():
            driver = self._driver_from(request)
            if driver is None:
                self.message_user(request, "Driver not found", level=messages.ERROR)
                return
        reason = request.POST.get("reason", "")[:500]
        failure_reason = request.POST.get("failure_reason", "")
        if failure_reason not in FailureReason.values:
            failure_reason = ""

        def move(order: Order) -> None:
            if driver is not None and driver.organization_id != order.organization_id:
                raise NotFound(f"{order.external_ref}: Driver not found")
            self.order_move(
                order=order,
                to_status=to_status,
                actor=request.user.get_username(),
                driver=driver,
                reason=reason,
                failure_reason=failure_reason,
            )

        self._each_order(
            request, queryset, move, lambda moved: f"Moved {moved} order(s) to {to_status}."
        )

    def order_move(
        self,
        *,
        order: Order,
        to_status: str,
        actor: str,
        driver,
        reason: str,
        failure_reason: str = "",
    ) -> None:
        """One order's move; dispatch registers a subclass that also puts an assigned order on
        its driver's route of the day (dispatch.admin_orders)."""
        order_services.order_transition(
            order=order,
            to_status=to_status,
            actor=actor,
            driver=driver,
            reason=reason,
            failure_reason=failure_reason,
        )

    def simulate_selected(self, request, queryset, outcome: str) -> None:
        """The management API's simulate, per selected order, at the default pace."""

        def simulate(order: Order) -> None:
            sandbox.order_simulation_start(
                organization_id=order.organization_id,
                order_id=order.id,
                outcome=outcome,
                actor=f"sandbox ({request.user.get_username()})",
            )

        self._each_order(
            request,
            queryset.select_related("organization"),
            simulate,
            lambda started: (
                f"Simulating {started} order(s) until {outcome}, one status every "
                f"{sandbox.DEFAULT_STEP_SECONDS} s."
            ),
        )

    def _each_order(
        self, request, orders, act: Callable[[Order], None], done_message: Callable[[int], str]
    ) -> None:
        """`act` on each order: a refused order (an ApplicationError) does not stop the others;
        one message says how many went through (if any), then one error message per refusal."""
        done, refused = 0, []
        for order in orders:
            try:
                act(order)
            except ApplicationError as exc:
                refused.append(str(exc))  # the message, a list's entries joined by "; "
                continue
            done += 1
        if done:
            self.message_user(request, done_message(done))
        for message in refused:
            self.message_user(request, message, level=messages.ERROR)

    def _driver_from(self, request) -> Driver | None:
        parsed = parse_uuid(request.POST.get("driver_id", "").strip())
        if parsed is None:
            return None
        driver = Driver.objects.filter(pk=parsed).first()
        if driver is None:
            return None
        # An organization admin can only name drivers of organizations they administer.
        if not self._is_superuser(request) and (
            driver.organization_id not in administered_organization_ids(request.user)
        ):
            return None
        return driver
