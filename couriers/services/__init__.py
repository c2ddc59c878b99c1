"""The couriers' writes, one module per sub-domain: `tokens` (drivers' access tokens), `photos`,
`events` (stop events and proof), `locations` (positions, trail and live ETAs), `retention`
(proof files and unused photos past their time)."""
