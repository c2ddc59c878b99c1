from django.contrib.admin.apps import AdminConfig


class DeliveryAdminConfig(AdminConfig):
    default_site = "delivery.admin_site.DeliveryAdminSite"
