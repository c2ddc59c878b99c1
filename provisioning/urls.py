from delivery.routing import route
from provisioning import apis

urlpatterns = [
    *route("provisioning/organizations", apis.OrganizationsApi.as_view()),
    *route("provisioning/organizations/<str:org_id>", apis.OrganizationDetailApi.as_view()),
    *route("provisioning/organizations/<str:org_id>/admins", apis.OrganizationAdminsApi.as_view()),
    *route("provisioning/admins/<str:user_id>/resend-invite", apis.AdminResendInviteApi.as_view()),
    *route(
        "provisioning/admins/<str:user_id>/reset-password", apis.AdminResetPasswordApi.as_view()
    ),
    *route("provisioning/invite/<str:token>", apis.InviteReadApi.as_view()),
    *route("provisioning/invite/<str:token>/accept", apis.InviteAcceptApi.as_view()),
    *route("provisioning/organizations/<str:org_id>/api-keys", apis.ApiKeysApi.as_view()),
    *route(
        "provisioning/organizations/<str:org_id>/api-keys/<str:key_id>",
        apis.ApiKeyDetailApi.as_view(),
    ),
    *route(
        "provisioning/organizations/<str:org_id>/api-keys/<str:key_id>/rotate",
        apis.ApiKeyRotateApi.as_view(),
    ),
]
