-- Issue 28.2: the shopper's IP as the connector needs it (Openpay's SDK sends it as X-Forwarded-For
-- and refuses to call without one since 2024). From the confirm's `payer_ip`, or the browser's
-- address at the public checkout. Kept on the attempt like return_url; null when unknown.
alter table attempts add column payer_ip text;
