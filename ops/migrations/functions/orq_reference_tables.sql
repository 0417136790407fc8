-- orq_reference_tables: the tables Citus copies to every node instead of distributing them by
-- tenant_id (docs/scaling.md; read by orq_citus_distribute(), migration 0161, and by
-- ops/citus-schema.ts). A repeatable function file (ops/migrate.ts): a new catalog or other
-- reference table is declared by adding it here, in the change that creates the table. Numbered
-- migrations 0160 and 0181 defined it before this file existed; this is 0181's version unchanged.
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
