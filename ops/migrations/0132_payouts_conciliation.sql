-- Issue 28.6: the hourly conciliation finds the live-rail payouts of today and yesterday (operation
-- day) by their day; without this it would read the whole payouts table every hour.
create index if not exists payouts_live_operation_date on payouts (operation_date, tenant_id) where rail_key <> 'sim';
