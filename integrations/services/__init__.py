"""Writes of the integrations app, by sub-domain: `orders` (the shared order model and its
status machine), `windows` (partner window capacity), `partner` (the partner family's
operations), `idempotency` (Idempotency-Key claims)."""
