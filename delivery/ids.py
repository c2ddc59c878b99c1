"""Primary keys: UUIDs that sort by creation time (version 7, RFC 9562).

A random (version 4) key puts each new row on a random leaf of its primary key and of every
index on a foreign key to it (status events by order, deliveries by event, proofs by order), so
once those indexes outgrow memory every INSERT reads and dirties a cold page
(docs/performance.md "History"). A time-ordered key puts new rows on the right-most leaves, as a
sequence does, while staying unguessable enough for ids in URLs (74 random bits) and unique
across processes without a round trip. Python 3.14 has uuid.uuid7; until then, the uuid6
library's.
"""

import uuid

from uuid6 import uuid7


def new_id() -> uuid.UUID:
    """A new primary key: a version 7 UUID (a uuid.UUID)."""
    return uuid7()
