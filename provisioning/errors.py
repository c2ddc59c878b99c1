from delivery.errors import BadRequest, NotFound


class InviteNotFound(NotFound):
    default_message = "Invite not found"


class InviteExpired(BadRequest):
    default_message = "Invite has expired"


class InviteAlreadyAccepted(BadRequest):
    default_message = "Invite has already been accepted"


class NoPendingInvite(BadRequest):
    default_message = "User has no pending invite"
