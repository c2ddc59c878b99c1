"""Writes on slots: `templates` (policy, templates, seeding), `bookings` (the capacity rule, an
order's slot), `holds` (slot holds at checkout)."""
