"""Examples of the management API's login, API key and driver operations in the OpenAPI document
(docs/contract.md "Authentication and scope", "Management API").

One made-up organization tells the whole story: the same ids, keys and times appear in every
operation that shows them, here and in the provisioning and webhooks examples, which build on
these values. Values have the form the service gives them (UUIDs, `sk_<platform>_` keys listed
masked, `whsec_` secrets, ISO 8601 times in UTC)."""

from delivery.schema import answer_example, request_example

ORGANIZATION_ID = "f265ebf7-dcdf-4319-a286-a097890150d6"
USER_ID = "a84c70e4-02c9-459b-861b-f6264b7f461e"
API_KEY_ID = "e84425b9-d730-4672-8601-96d7d8b18506"
DRIVER_ID = "1fe1c9c4-f693-484c-a8c9-473a2cc2204d"

CREATED_AT = "2026-03-02T09:15:00Z"
LATER = "2026-03-02T10:41:07Z"

ORGANIZATION = {"id": ORGANIZATION_ID, "slug": "acme-deliveries", "name": "Acme Deliveries"}
ADMIN_EMAIL = "dana@acme.example"
ADMIN = {"id": USER_ID, "email": ADMIN_EMAIL, "name": "Dana Okafor"}

WEBHOOK_URL = "https://hooks.partner-a.example/delivery"
#: the full value of the example key; listings show only its prefix
API_KEY_VALUE = "sk_partner_a_Xe65wv5ZFQSlSwb4ZLlpzu2oeK6qLY2dE-tVPEAdq7M"

_KEY_SETTINGS = {
    "name": "Partner A production",
    "platform": "partner_a",
    "webhookUrl": WEBHOOK_URL,
    "webhookEvents": ["order.assigned", "order.delivered", "order.failed"],
}
_KEY_NAME = {"id": API_KEY_ID, "name": _KEY_SETTINGS["name"]}
_KEY_STATE = {
    "platform": "partner_a",
    "test": False,
    "webhookUrl": WEBHOOK_URL,
    "webhookEvents": _KEY_SETTINGS["webhookEvents"],
    "isActive": True,
    "createdAt": CREATED_AT,
}
API_KEY_LISTED = {**_KEY_NAME, "apiKey": "sk_partner_a_Xe65****", **_KEY_STATE, "lastUsedAt": LATER}
API_KEY_ISSUED = {
    **_KEY_NAME,
    "apiKey": API_KEY_VALUE,
    "webhookSecret": "whsec_pajfYEu3tf6xTBzam8YzeBY+SHpV4tI1lV6cChv4JmA=",
    **_KEY_STATE,
}

#: changing where a key's webhooks go and which events they carry (null: every event)
API_KEY_CHANGE = {
    "webhookUrl": "https://hooks.partner-a.example/v2/delivery",
    "webhookEvents": None,
}
API_KEY_CHANGED = {**API_KEY_LISTED, **API_KEY_CHANGE}

API_KEY_CREATE = [request_example(_KEY_SETTINGS), answer_example(201, API_KEY_ISSUED)]
API_KEY_LIST = [answer_example(200, API_KEY_LISTED)]
API_KEY_UPDATE = [request_example(API_KEY_CHANGE), answer_example(200, API_KEY_CHANGED)]

AUTH_TOKEN_CREATE = [
    request_example({"email": ADMIN_EMAIL, "password": "correct horse battery staple"}),
    answer_example(
        200,
        {
            "token": "3q2yVd0LkP4mN8sR1tY6wB3cF9hJ5gAe_hxT1h2xxlQ",
            "expiresAt": "2026-03-02T21:15:00Z",
            "user": ADMIN,
            "organizations": [{**ORGANIZATION, "orgRole": "admin"}],
        },
    ),
]
