"""Writes on slots, by sub-domain: `templates` (the slot policy, templates and seeding),
`bookings` (the capacity rule, and booking, moving and releasing an order's slot), `holds`
(slot holds at checkout)."""
