from delivery.errors import BadRequest, Conflict, Forbidden, NotFound, Unauthorized


class OrganizationNotFound(NotFound):
    default_message = "Organization not found"


class UserNotFound(NotFound):
    default_message = "User not found"


class ApiKeyNotFound(NotFound):
    default_message = "API key not found"


class SlugTaken(BadRequest):
    """A taken slug is a 400, as the contract's example shows (contract "Provisioning")."""

    def __init__(self, slug: str):
        super().__init__(f"Slug {slug} is already taken")


class ApiKeyPlatformTaken(Conflict):
    default_message = "A key for this platform already exists for this tenant; rotate or revoke it"


class ApiKeyRevoked(Conflict):
    default_message = "API key is revoked"


class ApiKeyMissing(Unauthorized):
    default_message = "Missing X-API-Key header"


class ApiKeyInvalid(Unauthorized):
    default_message = "Invalid API key"


class PlatformMismatch(Forbidden):
    def __init__(self, integration: str):
        super().__init__(f"API key does not match {integration} integration")


class InvalidToken(Unauthorized):
    default_message = "Invalid or missing token"


class InvalidCredentials(Unauthorized):
    default_message = "Invalid email or password"


class DriverNotFound(NotFound):
    default_message = "Driver not found"
