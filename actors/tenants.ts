// Tenants and their API keys (operator API, decisions.md §2). Keys are generated here, returned
// once, and stored only as sha256 hashes.
import { randomUUID } from 'node:crypto';
import type { Sql } from '../kernel/db.js';
import { generateApiKey, hashKey } from '../kernel/keys.js';
import { ApiError } from '../kernel/errors.js';
import type { Db } from '../kernel/db.js';

export interface ApiKeyView {
  id: string;
  object: 'api_key';
  key?: string;
  livemode: boolean;
  scopes: string[];
  revoked?: boolean;
}

export interface TenantView {
  id: string;
  object: 'tenant';
  name: string;
  api_keys?: ApiKeyView[];
  created_at: string;
}

async function insertKey(tx: Db, tenantId: string, livemode: boolean, scopes: string[]): Promise<ApiKeyView> {
  const key = generateApiKey(livemode);
  const id = randomUUID();
  await tx`
    -- a new key; only its hash and a short prefix are kept
    insert into api_keys (id, tenant_id, livemode, key_hash, key_prefix, scopes)
    values (${id}, ${tenantId}, ${livemode}, ${hashKey(key)}, ${key.slice(0, 12)}, ${scopes})`;
  return { id, object: 'api_key', key, livemode, scopes };
}

/** A tenant with one test and one live key, both with scope "*". */
export async function createTenant(deps: { sql: Sql }, name: string): Promise<TenantView> {
  return deps.sql.begin((tx) => createTenantIn(tx, name));
}

/** The same, inside the caller's transaction. */
export async function createTenantIn(tx: Db, name: string): Promise<TenantView> {
  const id = randomUUID();
  const [row] = await tx`insert into tenants (id, name) values (${id}, ${name}) returning created_at`;
  const test = await insertKey(tx, id, false, ['*']);
  const live = await insertKey(tx, id, true, ['*']);
  return { id, object: 'tenant', name, api_keys: [test, live], created_at: (row.created_at as Date).toISOString() };
}

/** 404 tenant.not_found unless the tenant exists (operator API). */
export async function assertTenant(db: Db, tenantId: string) {
  const rows = await db`select 1 from tenants where id = ${tenantId}`;
  if (!rows.length) throw new ApiError('tenant.not_found', `No tenant ${tenantId}.`);
}

export async function createApiKey(deps: { sql: Sql }, tenantId: string, livemode: boolean, scopes: string[]): Promise<ApiKeyView> {
  return deps.sql.begin(async (tx) => {
    await assertTenant(tx, tenantId);
    return insertKey(tx, tenantId, livemode, scopes);
  });
}

/** Revokes a key; repeating it answers the same. The key answers 401 on every process from then on. */
/** The tenant's keys, newest first, without secrets (only their first characters, to tell them apart). */
export async function listApiKeys(deps: { sql: Sql }, tenantId: string) {
  await assertTenant(deps.sql, tenantId);
  const rows = await deps.sql`select id, livemode, key_prefix, scopes, created_at, revoked_at from api_keys where tenant_id = ${tenantId} order by created_at desc, id`;
  return {
    object: 'list' as const,
    data: rows.map((r) => ({
      id: r.id as string,
      object: 'api_key' as const,
      key_prefix: `${String(r.key_prefix)}…`,
      livemode: r.livemode as boolean,
      scopes: r.scopes as string[],
      revoked: !!r.revoked_at,
      created_at: (r.created_at as Date).toISOString(),
    })),
  };
}

export async function revokeApiKey(deps: { sql: Sql; keys: { announceRevocation(keyId: string): Promise<void> } }, tenantId: string, keyId: string): Promise<ApiKeyView & { revoked: true }> {
  await assertTenant(deps.sql, tenantId);
  const rows = await deps.sql`
    -- revoke once; a second call finds it already revoked
    update api_keys set revoked_at = coalesce(revoked_at, now())
    where id = ${keyId} and tenant_id = ${tenantId}
    returning id, livemode, scopes`;
  if (!rows.length) throw new ApiError('api_key.not_found', `No API key ${keyId} belongs to tenant ${tenantId}.`);
  await deps.keys.announceRevocation(keyId);
  return { id: keyId, object: 'api_key', livemode: rows[0].livemode as boolean, scopes: rows[0].scopes as string[], revoked: true };
}

/** Operator settings of a tenant: the refund four-eyes threshold (null removes it). */
export async function updateSettings(deps: { sql: Sql }, tenantId: string, body: { refund_approval_threshold_minor?: number; refund_approval_disabled?: true }) {
  const patch = { refund_approval_threshold_minor: body.refund_approval_disabled ? null : body.refund_approval_threshold_minor ?? null };
  const rows = await deps.sql`
    update tenants set settings = settings || ${deps.sql.json(patch as never)} where id = ${tenantId} returning settings`;
  if (!rows.length) throw new ApiError('tenant.not_found', `No tenant ${tenantId}.`);
  const settings = rows[0].settings as { refund_approval_threshold_minor?: number | null };
  return { object: 'tenant_settings' as const, tenant_id: tenantId, refund_approval_threshold_minor: settings.refund_approval_threshold_minor ?? null };
}
