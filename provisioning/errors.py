from delivery.errors import BadRequest, NotFound


class InviteNotFound(NotFound):
    code = "invite_not_found"
    default_message = "Invite not found"


class InviteExpired(BadRequest):
    code = "invite_expired"
    default_message = "Invite has expired"


class InviteAlreadyAccepted(BadRequest):
    code = "invite_already_accepted"
    default_message = "Invite has already been accepted"


class NoPendingInvite(BadRequest):
    code = "no_pending_invite"
    default_message = "User has no pending invite"
