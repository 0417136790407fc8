// Tenants and their API keys (operator API, decisions.md §2). Keys are generated here, returned
// once, and stored only as sha256 hashes.
import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../api/deps.js';
import { generateApiKey, hashKey } from '../api/auth.js';
import { ApiError } from '../api/errors.js';
import type { Db } from '../ops/db.js';

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
export async function createTenant(deps: Pick<AppDeps, 'sql'>, name: string): Promise<TenantView> {
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

export async function createApiKey(deps: Pick<AppDeps, 'sql'>, tenantId: string, livemode: boolean, scopes: string[]): Promise<ApiKeyView> {
  return deps.sql.begin(async (tx) => {
    await assertTenant(tx, tenantId);
    return insertKey(tx, tenantId, livemode, scopes);
  });
}

/** Revokes a key; repeating it answers the same. The key answers 401 on every process from then on. */
export async function revokeApiKey(deps: Pick<AppDeps, 'sql' | 'keys'>, tenantId: string, keyId: string): Promise<ApiKeyView & { revoked: true }> {
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
export async function updateSettings(deps: Pick<AppDeps, 'sql'>, tenantId: string, body: { refund_approval_threshold_minor?: number; refund_approval_disabled?: true }) {
  const patch = { refund_approval_threshold_minor: body.refund_approval_disabled ? null : body.refund_approval_threshold_minor ?? null };
  const rows = await deps.sql`
    update tenants set settings = settings || ${deps.sql.json(patch as never)} where id = ${tenantId} returning settings`;
  if (!rows.length) throw new ApiError('tenant.not_found', `No tenant ${tenantId}.`);
  const settings = rows[0].settings as { refund_approval_threshold_minor?: number | null };
  return { object: 'tenant_settings' as const, tenant_id: tenantId, refund_approval_threshold_minor: settings.refund_approval_threshold_minor ?? null };
}
