from delivery.routing import route
from slots import apis

_MANAGE = "manage/organizations/<str:org_id>"

urlpatterns = [
    *route("public/delivery-slots/availability/bulk", apis.BulkAvailabilityApi.as_view()),
    *route("public/delivery-slots/availability", apis.DayAvailabilityApi.as_view()),
    *route(f"{_MANAGE}/slot-policy", apis.SlotPolicyApi.as_view()),
    *route(f"{_MANAGE}/slot-templates", apis.SlotTemplatesApi.as_view()),
    # Before the detail route, so `seed` is never read as a template id.
    *route(f"{_MANAGE}/slot-templates/seed", apis.SlotTemplatesSeedApi.as_view()),
    *route(f"{_MANAGE}/slot-templates/<str:template_id>", apis.SlotTemplateDetailApi.as_view()),
]
