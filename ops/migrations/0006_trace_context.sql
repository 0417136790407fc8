-- The trace context of the transition that wrote an event, so its webhook deliveries join that trace.
alter table outbox_events add column traceparent jsonb;
