-- issue 24 part 1 / issue 28 point 3: refunds on the outbound protocol (kernel/outbound.ts). The
-- refund records that its call to the provider is about to leave, in its own fenced step, before
-- the call; a refund with send_started_at set may have reached the provider (a timeout, a 5xx, a
-- killed worker), so the provider is asked (Acquirer.lookupRefund) before anything is sent again.
alter table refunds add column send_started_at timestamptz;
