"""The one place Django admin is scoped per tenant: every tenant model's admin derives from this.

Superusers see everything; an organization admin sees, adds and changes only rows of the
organizations they administer, and can pick only those in organization fields.
"""

from django.contrib import admin
from django.core.exceptions import PermissionDenied

from tenants.admin_site import administered_organization_ids


class OrganizationScopedAdmin(admin.ModelAdmin):
    #: the lookup from this model to its organization's id
    organization_lookup = "organization_id"

    def _is_superuser(self, request) -> bool:
        return request.user.is_active and request.user.is_superuser

    def get_queryset(self, request):
        qs = super().get_queryset(request)
        if self._is_superuser(request):
            return qs
        return qs.filter(
            **{f"{self.organization_lookup}__in": administered_organization_ids(request.user)}
        )

    def get_list_display(self, request):
        # An admin of one organization sees only its rows: a column naming it says nothing.
        columns = super().get_list_display(request)
        single = len(administered_organization_ids(request.user)) == 1
        if single and not self._is_superuser(request):
            return [column for column in columns if column != "organization"]
        return columns

    def _is_org_admin(self, request) -> bool:
        return bool(administered_organization_ids(request.user))

    def has_module_permission(self, request) -> bool:
        return self._is_superuser(request) or self._is_org_admin(request)

    def has_view_permission(self, request, obj=None) -> bool:
        return self._allowed(request, obj)

    def has_add_permission(self, request) -> bool:
        return self._is_superuser(request) or self._is_org_admin(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return self._allowed(request, obj)

    def has_delete_permission(self, request, obj=None) -> bool:
        return self._allowed(request, obj)

    def _allowed(self, request, obj) -> bool:
        if self._is_superuser(request):
            return True
        allowed = administered_organization_ids(request.user)
        if obj is None:
            return bool(allowed)
        return self._organization_id_of(obj) in allowed

    def _organization_id_of(self, obj):
        value = obj
        for part in self.organization_lookup.split("__"):
            value = getattr(value, part)
        return value

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "organization" and not self._is_superuser(request):
            kwargs["queryset"] = db_field.related_model.objects.filter(
                pk__in=administered_organization_ids(request.user)
            )
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def check_organization_allowed(self, request, obj) -> None:
        if not self._is_superuser(request) and (
            self._organization_id_of(obj) not in administered_organization_ids(request.user)
        ):
            raise PermissionDenied

    def save_model(self, request, obj, form, change):
        self.check_organization_allowed(request, obj)
        super().save_model(request, obj, form, change)


class ReadOnlyAdminMixin:
    """Rows only the services write (outbox, counters, import records): admins look, never edit.
    Put it before OrganizationScopedAdmin (or an inline class) in the bases."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
