from django.contrib.admin.apps import AdminConfig


class DeliveryAdminConfig(AdminConfig):
    default_site = "tenants.admin_site.DeliveryAdminSite"
