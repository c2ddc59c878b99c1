"""Examples of the provisioning operations in the OpenAPI document (docs/contract.md
"Provisioning"): the parent platform's calls and the two public invite pages, with the
organization, admin and API key of the management API's examples."""

from delivery.schema import answer_example, request_example
from tenants import openapi_examples as tenant_examples

ORGANIZATION = {
    **tenant_examples.ORGANIZATION,
    "isActive": True,
    "createdAt": "2026-03-02T09:00:00Z",
}
ADMIN = tenant_examples.ADMIN
INVITE = {"expiresAt": "2026-03-09T09:00:00Z", "emailSent": True}
_NEW_ADMIN = {"email": ADMIN["email"], "name": ADMIN["name"]}

ORGANIZATION_CREATE = [
    request_example(
        {"name": ORGANIZATION["name"], "slug": ORGANIZATION["slug"], "admin": _NEW_ADMIN}
    ),
    answer_example(
        201,
        {"organization": ORGANIZATION, "admin": {**ADMIN, "isNewUser": True}, "invite": INVITE},
    ),
]
ORGANIZATION_LIST = [
    answer_example(
        200,
        {
            **ORGANIZATION,
            "counts": {"members": 1, "drivers": 4, "orders": 1250},
            "admins": [{**ADMIN, "orgRole": "admin", "invitePending": False}],
        },
    )
]
ORGANIZATION_UPDATE = [
    request_example({"isActive": False}),
    answer_example(200, {**ORGANIZATION, "isActive": False}),
]

_SECOND_ADMIN = {"email": "lee@acme.example", "name": "Lee Moreau"}
ADMIN_ADD = [
    request_example(_SECOND_ADMIN),
    answer_example(
        201,
        {
            "admin": {
                "id": "22f04942-c682-4889-8825-45a4543ff922",
                **_SECOND_ADMIN,
                "isNewUser": True,
                "alreadyMember": False,
            },
            "invite": INVITE,
        },
    ),
]
INVITE_RESEND = [
    answer_example(200, {"admin": ADMIN, "invite": {**INVITE, "expiresAt": "2026-03-10T14:30:00Z"}})
]
PASSWORD_RESET = [
    request_example({}, name="Generate a temporary password"),
    answer_example(
        200,
        {"ok": True, "email": ADMIN["email"], "temporaryPassword": "Tq3vX9kLm2RbW7pZ"},
        name="A generated temporary password",
    ),
]

INVITE_READ = [
    answer_example(
        200,
        {
            **_NEW_ADMIN,
            "organization": tenant_examples.ORGANIZATION,
            "expiresAt": INVITE["expiresAt"],
            "status": "pending",
        },
    )
]
INVITE_ACCEPT = [
    request_example({"password": "correct horse battery staple"}),
    answer_example(200, {"ok": True, "email": ADMIN["email"]}),
]

API_KEY_ROTATE = [
    answer_example(
        200,
        {
            **tenant_examples.API_KEY_ISSUED,
            "apiKey": "sk_partner_a_9cTq2LmVx8RbN4wKd7ZsYf1HgJ3pE6uA0oQiXtWrBn5",
            "webhookSecret": "whsec_3mR8Yx1qVb9TzKc2LwN7dF0sJp6HgA4eUo5iXy8BkQE=",
            "rotatedAt": tenant_examples.LATER,
        },
    )
]
API_KEY_REVOKE = [
    answer_example(
        200,
        {
            "id": tenant_examples.API_KEY_ID,
            "name": tenant_examples.API_KEY_LISTED["name"],
            "isActive": False,
            "revokedAt": tenant_examples.LATER,
        },
    )
]
