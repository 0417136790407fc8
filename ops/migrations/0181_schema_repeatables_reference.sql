-- schema_repeatables (the repeatable function files' checksums, ops/migrate.ts; created by the
-- runner itself, after the numbered migrations) is a catalog like schema_migrations: declared a
-- reference table, so that under Citus orq_citus_distribute() copies it to every node instead of
-- trying to distribute it by a tenant_id it does not have (docs/scaling.md).
-- Same list as 0160 (unchanged since) plus 'schema_repeatables'.
create or replace function orq_reference_tables() returns text[] language sql immutable as $$
  select array[
    -- catalogs
    'schema_migrations', 'schema_repeatables', 'blocked_taxpayers', 'operator_settings', 'report_cursor_keys',
    -- the tenants themselves: every distributed table's foreign key to tenants is to a reference table
    'tenants',
    -- who is calling: looked up by a hash or an email before the tenant is known
    'api_keys', 'portal_members', 'portal_sessions', 'portal_invitations', 'portal_password_resets',
    'signups', 'notification_outbox', 'self_invoice_slugs',
    -- the platform's operators and their audit trail (actions on no tenant or across tenants)
    'operators', 'operator_platform', 'audit_log'
  ]::text[]
$$;
