// First-start state: the operator key (when ADMIN_KEY is unset) and the demo tenant whose keys
// `npm start` prints. Postgres keeps only hashes; the plain values live in STATE_DIR (mode 0600)
// on the machine that created them, so they can be printed again at every start.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hashKey } from '../api/auth.js';
import { createOwnerIn } from '../actors/portal-accounts.js';
import { createTenantIn } from '../actors/tenants.js';
import { hashPassword } from '../kernel/passwords.js';
import type { Config } from './config.js';
import type { Sql } from '../kernel/db.js';
import { resolveState } from './paths.js';

const SEED_LOCK = 7_263_201_002;

function readState<T>(dir: string, name: string): T | undefined {
  const f = join(dir, name);
  if (!existsSync(f)) return undefined;
  try {
    return JSON.parse(readFileSync(f, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

function writeState(dir: string, name: string, value: unknown) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const f = join(dir, name);
  writeFileSync(f, JSON.stringify(value, null, 2) + '\n', { mode: 0o600 });
  chmodSync(f, 0o600);
}

export interface AdminKeyInfo {
  hash: string;
  /** The plain key when this machine knows it (ADMIN_KEY or the state file). */
  plain?: string;
  source: 'env' | 'generated' | 'state' | 'unknown';
}

export async function resolveAdminKey(sql: Sql, config: Config): Promise<AdminKeyInfo> {
  if (config.adminKey) return { hash: hashKey(config.adminKey), plain: config.adminKey, source: 'env' };
  const dir = resolveState(config.stateDir);
  const local = readState<{ admin_key: string }>(dir, 'admin-key.json');
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${SEED_LOCK})`;
    const [row] = await tx`select value from operator_settings where name = 'admin_key_hash'`;
    if (row) {
      const hash = row.value as string;
      if (local && hashKey(local.admin_key) === hash) return { hash, plain: local.admin_key, source: 'state' as const };
      return { hash, source: 'unknown' as const };
    }
    const plain = `adm_${randomBytes(24).toString('base64url')}`;
    const hash = hashKey(plain);
    await tx`insert into operator_settings (name, value) values ('admin_key_hash', ${hash})`;
    writeState(dir, 'admin-key.json', { admin_key: plain });
    return { hash, plain, source: 'generated' as const };
  });
}

export interface DemoTenant {
  tenant_id: string;
  name: string;
  test_key?: string;
  live_key?: string;
  /** The portal's owner of the demo tenant (made with it): sign in at /portal. */
  portal_email?: string;
  portal_password?: string;
  created: boolean;
}

/** Creates the demo tenant on first start; afterwards reports it, with its keys when this machine has them. */
export async function ensureDemoTenant(sql: Sql, config: Config): Promise<DemoTenant> {
  const dir = resolveState(config.stateDir);
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${SEED_LOCK})`;
    const [row] = await tx`select value from operator_settings where name = 'demo_tenant_id'`;
    const local = readState<DemoTenant>(dir, 'demo-tenant.json');
    if (row) {
      const id = row.value as string;
      if (local?.tenant_id === id && local.test_key && local.live_key) {
        const live = await tx`select count(*)::int as n from api_keys where tenant_id = ${id} and revoked_at is null and key_hash in ${tx([hashKey(local.test_key), hashKey(local.live_key)])}`;
        if (live[0].n === 2) return { ...local, created: false };
      }
      return { tenant_id: id, name: 'Demo', created: false };
    }
    const t = await createTenantIn(tx, 'Demo');
    await tx`insert into operator_settings (name, value) values ('demo_tenant_id', ${t.id})`;
    // An owner for the portal, so that a newcomer can sign in at /portal at once (one email per team:
    // the tenant's id in it keeps it unique when a database is seeded again).
    const portalEmail = `demo+${t.id.slice(0, 8)}@example.com`;
    const portalPassword = randomBytes(12).toString('base64url');
    await createOwnerIn(tx, t.id, portalEmail, 'Demo', await hashPassword(portalPassword));
    const demo: DemoTenant = {
      tenant_id: t.id,
      name: t.name,
      test_key: t.api_keys!.find((k) => !k.livemode)!.key,
      live_key: t.api_keys!.find((k) => k.livemode)!.key,
      portal_email: portalEmail,
      portal_password: portalPassword,
      created: true,
    };
    writeState(dir, 'demo-tenant.json', { ...demo, created: undefined });
    return demo;
  });
}
