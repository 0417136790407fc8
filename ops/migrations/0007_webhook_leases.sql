-- Webhook deliveries are claimed from Postgres by worker processes (no queue job per delivery):
-- a pending delivery held by a worker carries a lease. While the lease runs, no other worker sends
-- it; the holder renews it while the delivery waits in its memory or is in flight, and releases it
-- when it records the outcome. A crashed worker's deliveries become claimable when the lease ends.
alter table webhook_deliveries add column lease_until timestamptz;
-- Which worker process holds the lease (hostname:pid:random); renewals and failure records are
-- conditioned on it, so a worker whose lease lapsed never takes a delivery back from another one.
alter table webhook_deliveries add column lease_owner text;
