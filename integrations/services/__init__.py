"""Writes of the integrations app that both families share, by sub-domain: `orders` (the order
model and its status machine), `windows` (partner window capacity), `idempotency`
(Idempotency-Key claims), `sandbox` (the lifecycle sandbox). Each family's own operations live
with it: `integrations/partner/services.py`, `integrations/erp/services.py`."""
