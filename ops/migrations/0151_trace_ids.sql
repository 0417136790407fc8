-- The OpenTelemetry trace id of every entity step (kernel/entity.ts), null when tracing is off, so
-- an operator goes from a payment, refund, payout or invoice to the trace of each of its steps
-- (TRACE_URL_TEMPLATE; docs/operator.md). Nullable, no default: adding it rewrites nothing.
alter table entity_history add column trace_id text;
alter table payment_intent_history add column trace_id text;
