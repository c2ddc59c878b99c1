from delivery.errors import BadRequest, Conflict, Forbidden, NotFound, RateLimited, Unauthorized


class OrganizationNotFound(NotFound):
    code = "organization_not_found"
    default_message = "Organization not found"


class UserNotFound(NotFound):
    code = "user_not_found"
    default_message = "User not found"


class ApiKeyNotFound(NotFound):
    code = "api_key_not_found"
    default_message = "API key not found"


class SlugTaken(BadRequest):
    """A taken slug is a 400, as the contract's example shows (contract "Provisioning")."""

    code = "slug_taken"

    def __init__(self, slug: str):
        super().__init__(f"Slug {slug} is already taken")


class ApiKeyPlatformTaken(Conflict):
    code = "api_key_platform_taken"
    default_message = "A key for this platform already exists for this tenant; rotate or revoke it"


class ApiKeyRevoked(Conflict):
    code = "api_key_revoked"
    default_message = "API key is revoked"


class ProvisioningSecretMissing(Unauthorized):
    code = "provisioning_secret_missing"
    default_message = "Missing X-Provisioning-Secret header"


class ProvisioningSecretInvalid(Unauthorized):
    code = "provisioning_secret_invalid"
    default_message = "Invalid provisioning secret"


class ApiKeyMissing(Unauthorized):
    code = "api_key_missing"
    default_message = "Missing X-API-Key header"


class ApiKeyInvalid(Unauthorized):
    code = "api_key_invalid"
    default_message = "Invalid API key"


class PlatformMismatch(Forbidden):
    code = "platform_mismatch"

    def __init__(self, integration: str):
        super().__init__(f"API key does not match {integration} integration")


class InvalidToken(Unauthorized):
    code = "token_invalid"
    default_message = "Invalid or missing token"


class InvalidCredentials(Unauthorized):
    code = "credentials_invalid"
    default_message = "Invalid email or password"


class DriverNotFound(NotFound):
    code = "driver_not_found"
    default_message = "Driver not found"


class LoginLocked(RateLimited):
    """Too many wrong passwords from one address (for one account, or for any): every login
    from it waits, the right password too (docs/contract.md "Failed logins")."""

    code = "login_locked"
    default_message = "Too many failed logins; try again later"


class LoginSlowedDown(RateLimited):
    """Too many wrong passwords for one account from anywhere: the account's logins are spaced
    out, except from addresses it logged in from before (docs/contract.md "Failed logins")."""

    code = "login_slowed_down"
    default_message = "Too many failed logins for this account; try again shortly"
