// Per-tenant routing (issue 20; docs/routing.md): the connectors a tenant enables per mode with
// their fee tables (MDR basis points + fixed fee, per method and card brand) and their sealed
// credentials; the routing decisions recorded with each attempt; the connectors' recent scores.
// The confirm and the retry read the table through `tableFor` (cached a few seconds per process,
// dropped at once in the process that changed it).
import type { Sql } from '../kernel/db.js';
import { ApiError } from '../kernel/errors.js';
import type { Principal } from '../kernel/principal.js';
import type { SecretBox } from '../kernel/secret-box.js';
import type { PaymentMethod } from '../connectors/acquirer.js';
import type { FeeTable, MethodFees, Router } from '../connectors/routing.js';

const TABLE_TTL_MS = 3000;
/** Scores look at the attempts answered in this window. */
export const SCORE_WINDOW_HOURS = 24;

export interface TenantTable {
  table: FeeTable;
  /** The connector routing savings are measured against. */
  defaultKey?: string;
  /** false: the tenant has no table of its own for this mode (the deployment's default applies). */
  configured: boolean;
}

type FeeBody = { bps: number; fixed_minor: number; brands?: Record<string, { bps: number; fixed_minor: number }> };
export interface PutConnectorBody {
  enabled?: boolean;
  default?: boolean;
  /** Omitted: the connector's published fees (the simulators'), where it has them. */
  fees?: Partial<Record<PaymentMethod, FeeBody>>;
  credentials?: Record<string, string>;
}

/** The credential fields each real connector needs (required first, then optional). */
export const CREDENTIAL_FIELDS: Record<string, { required: string[]; optional: string[] }> = {
  conekta: { required: ['private_key'], optional: ['public_key', 'webhook_public_key'] },
  openpay: { required: ['merchant_id', 'private_key'], optional: ['public_key', 'webhook_user', 'webhook_password'] },
};

const credContext = (tenantId: string, livemode: boolean, key: string) => `routing_credentials:${tenantId}:${livemode ? 'live' : 'test'}:${key}`;

const toMethodFees = (f: FeeBody): MethodFees => ({
  bps: f.bps,
  fixedMinor: f.fixed_minor,
  ...(f.brands ? { brands: Object.fromEntries(Object.entries(f.brands).map(([b, s]) => [b, { bps: s.bps, fixedMinor: s.fixed_minor }])) } : {}),
});
const fromMethodFees = (f: MethodFees): FeeBody => ({
  bps: f.bps,
  fixed_minor: f.fixedMinor,
  ...(f.brands ? { brands: Object.fromEntries(Object.entries(f.brands).map(([b, s]) => [b, { bps: s.bps, fixed_minor: s.fixedMinor }])) } : {}),
});

const hint = (v: string) => (v.length <= 8 ? '…' : `${v.slice(0, 4)}…${v.slice(-4)}`);

function connectorView(r: Record<string, unknown>) {
  const fees = r.fees as Record<string, MethodFees>;
  return {
    object: 'routing_connector' as const,
    connector_key: r.connector_key as string,
    enabled: r.enabled as boolean,
    default: r.is_default as boolean,
    livemode: r.livemode as boolean,
    fees: Object.fromEntries(Object.entries(fees).map(([m, f]) => [m, fromMethodFees(f)])),
    credentials: r.credentials_hint ? { configured: true, hint: r.credentials_hint as string } : { configured: false },
    updated_at: (r.updated_at as Date).toISOString(),
  };
}

export class Routing {
  private cache = new Map<string, { at: number; v: TenantTable }>();

  constructor(private d: { sql: Sql; readSql: Sql; router: Router; secrets: SecretBox; publishedFees: FeeTable }) {}

  /** The tenant's routing table for a mode (its enabled connectors), or the deployment's default. */
  async tableFor(tenantId: string, livemode: boolean): Promise<TenantTable> {
    const k = `${tenantId}:${livemode}`;
    const hit = this.cache.get(k);
    if (hit && Date.now() - hit.at < TABLE_TTL_MS) return hit.v;
    const rows = await this.d.sql`
      select connector_key, enabled, is_default, fees from routing_connectors
       where tenant_id = ${tenantId} and livemode = ${livemode} order by created_at, connector_key`;
    let v: TenantTable;
    if (!rows.length) v = { table: this.d.router.defaultTable(), defaultKey: Object.keys(this.d.router.defaultTable())[0], configured: false };
    else {
      const table: FeeTable = {};
      for (const r of rows) if (r.enabled) table[r.connector_key as string] = r.fees as Record<string, MethodFees>;
      const def = rows.find((r) => r.is_default && r.enabled)?.connector_key as string | undefined;
      v = { table, defaultKey: def ?? Object.keys(table)[0], configured: true };
    }
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(k, { at: Date.now(), v });
    return v;
  }

  async list(p: Principal) {
    const rows = await this.d.sql`select * from routing_connectors where tenant_id = ${p.tenantId} and livemode = ${p.livemode} order by created_at, connector_key`;
    if (rows.length) return { object: 'list' as const, configured: true, data: rows.map(connectorView) };
    // No table of its own: the deployment's default, as it applies to this mode.
    const def = this.d.router.defaultTable();
    const data = Object.entries(def)
      .filter(([key]) => !(p.livemode && this.d.router.connector(key).simulated))
      .map(([key, fees], i) => ({
        object: 'routing_connector' as const, connector_key: key, enabled: true, default: i === 0, livemode: p.livemode,
        fees: Object.fromEntries(Object.entries(fees).map(([m, f]) => [m, fromMethodFees(f!)])), credentials: { configured: false },
      }));
    return { object: 'list' as const, configured: false, data };
  }

  /**
   * One connector of the tenant's table with what the provider needs from the tenant (issue 28):
   * the webhook URL to register, Conekta's webhook public key as stored, Openpay's last verification
   * code, and a state from the latest calls (credentials refused, calls without an answer). Public
   * values only: never a private key or password.
   */
  async get(p: Principal, key: string) {
    const [row] = await this.d.sql`select * from routing_connectors where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and connector_key = ${key}`;
    if (!row) throw new ApiError('routing.connector_not_found');
    const view = connectorView(row);
    const creds = CREDENTIAL_FIELDS[key] ? await this.credentialsFor(p.tenantId, p.livemode, key) : null;
    const webhook: Record<string, string> = {};
    if (key === 'conekta' || key === 'openpay') webhook.url = `/webhooks/in/${key}/${p.tenantId}`;
    if (key === 'conekta' && creds?.webhook_public_key) webhook.public_key = creds.webhook_public_key;
    if (key === 'openpay') {
      const [v] = await this.d.sql`select code, received_at from connector_verifications where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and connector_key = ${key}`;
      if (v) Object.assign(webhook, { verification_code: v.code as string, verification_received_at: (v.received_at as Date).toISOString() });
      if (creds?.webhook_user) webhook.user = creds.webhook_user;
    }
    return { ...view, ...(Object.keys(webhook).length ? { webhook } : {}), status: await this.connectorState(p, key, row.updated_at as Date, !!row.credentials_sealed || !CREDENTIAL_FIELDS[key]) };
  }

  /** The connector's state from its latest attempts in this mode since its configuration last changed. */
  private async connectorState(p: Principal, key: string, since: Date, configured: boolean) {
    if (!configured) return { state: 'not_configured' as const, detail: `${key} needs credentials (${CREDENTIAL_FIELDS[key]!.required.join(', ')}).` };
    const [last] = await this.d.sql`
      select status, failure_code, failure_message, updated_at from attempts
       where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and connector_key = ${key} and created_at >= ${since} and status <> 'pending'
       order by updated_at desc limit 1`;
    if (last?.failure_code === 'invalid_credentials') return { state: 'invalid_credentials' as const, detail: (last.failure_message as string | null) ?? `${key} refused the stored credentials.`, at: (last.updated_at as Date).toISOString() };
    const [stuck] = await this.d.sql`
      select count(*)::int as n, min(created_at) as since from attempts
       where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and connector_key = ${key} and status = 'pending' and created_at < now() - interval '2 minutes'`;
    if ((stuck?.n as number) > 0) return { state: 'unreachable' as const, detail: `${stuck!.n} call(s) to ${key} without an answer since ${(stuck!.since as Date).toISOString()}: check network access (outbound HTTPS) and the provider's status.`, at: (stuck!.since as Date).toISOString() };
    if (!last) return { state: 'unused' as const };
    return { state: 'ok' as const, at: (last.updated_at as Date).toISOString() };
  }

  /** Keeps a provider's webhook verification code (Openpay's registration ping) for the tenant to read. */
  async recordVerification(tenantId: string, livemode: boolean, key: string, code: string) {
    await this.d.sql`
      insert into connector_verifications (tenant_id, livemode, connector_key, code) values (${tenantId}, ${livemode}, ${key}, ${code})
      on conflict (tenant_id, livemode, connector_key) do update set code = excluded.code, received_at = now()`;
  }

  /** Adds or replaces one connector of the tenant's table for the key's mode. */
  async put(p: Principal, key: string, body: PutConnectorBody) {
    if (!this.d.router.has(key)) throw new ApiError('routing.invalid_connector', `Unknown connector "${key}".`);
    const connector = this.d.router.connector(key);
    if (p.livemode && connector.simulated) throw new ApiError('routing.invalid_connector', `"${key}" is a simulator: live keys never route to it.`);
    const fees: Record<string, MethodFees> = {};
    if (!body.fees) Object.assign(fees, this.d.publishedFees[key] ?? {});
    for (const [m, f] of Object.entries(body.fees ?? {})) {
      if (!f) continue;
      if (!connector.supports(m as PaymentMethod)) throw new ApiError('routing.invalid_fees', `"${key}" does not take ${m}.`);
      fees[m] = toMethodFees(f);
    }
    if (!Object.keys(fees).length) throw new ApiError('routing.invalid_fees', '`fees` needs at least one method.');
    let sealed: string | null = null;
    let credHint: string | null = null;
    const fields = CREDENTIAL_FIELDS[key];
    if (body.credentials) {
      if (!fields) throw new ApiError('routing.invalid_credentials', `"${key}" takes no credentials.`);
      for (const f of fields.required) if (!body.credentials[f]) throw new ApiError('routing.invalid_credentials', `credentials.${f} is required for ${key}.`);
      const unknown = Object.keys(body.credentials).filter((f) => !fields.required.includes(f) && !fields.optional.includes(f));
      if (unknown.length) throw new ApiError('routing.invalid_credentials', `Unknown credential fields for ${key}: ${unknown.join(', ')}.`);
      sealed = this.d.secrets.seal(JSON.stringify(body.credentials), credContext(p.tenantId, p.livemode, key));
      credHint = hint(body.credentials[fields.required[fields.required.length - 1]!]!);
    } else if (fields) {
      const [had] = await this.d.sql`select 1 from routing_connectors where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and connector_key = ${key} and credentials_sealed is not null`;
      if (!had) throw new ApiError('routing.credentials_required', `${key} needs credentials (${fields.required.join(', ')}).`);
    }
    const isDefault = body.default === true;
    const [row] = await this.d.sql.begin(async (tx) => {
      if (isDefault) await tx`update routing_connectors set is_default = false where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and is_default and connector_key <> ${key}`;
      return tx`
        insert into routing_connectors (tenant_id, livemode, connector_key, enabled, is_default, fees, credentials_sealed, credentials_hint)
        values (${p.tenantId}, ${p.livemode}, ${key}, ${body.enabled ?? true}, ${isDefault}, ${tx.json(fees as never)}, ${sealed}, ${credHint})
        on conflict (tenant_id, livemode, connector_key) do update
          set enabled = excluded.enabled, is_default = excluded.is_default, fees = excluded.fees,
              credentials_sealed = coalesce(excluded.credentials_sealed, routing_connectors.credentials_sealed),
              credentials_hint = coalesce(excluded.credentials_hint, routing_connectors.credentials_hint), updated_at = now()
        returning *`;
    });
    this.cache.delete(`${p.tenantId}:${p.livemode}`);
    return connectorView(row);
  }

  async remove(p: Principal, key: string) {
    const rows = await this.d.sql`delete from routing_connectors where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and connector_key = ${key} returning connector_key`;
    if (!rows.length) throw new ApiError('routing.connector_not_found');
    this.cache.delete(`${p.tenantId}:${p.livemode}`);
    return { object: 'routing_connector' as const, connector_key: key, deleted: true };
  }

  /**
   * The browser tokenizer the checkout uses for cards in this mode (docs/routing.md "Live checkout"):
   * the default real connector when it has a public key, else the first real one that has. Public
   * keys only; null when none is configured.
   */
  async tokenizerFor(tenantId: string, livemode: boolean): Promise<{ connector: string; public_key: string; merchant_id?: string; sandbox: boolean } | null> {
    const rows = await this.d.sql`
      select connector_key from routing_connectors
       where tenant_id = ${tenantId} and livemode = ${livemode} and enabled and credentials_sealed is not null and connector_key in ('conekta', 'openpay')
       order by is_default desc, created_at, connector_key`;
    for (const r of rows) {
      const c = await this.credentialsFor(tenantId, livemode, r.connector_key as string);
      if (c?.public_key) return { connector: r.connector_key as string, public_key: c.public_key, ...(c.merchant_id ? { merchant_id: c.merchant_id } : {}), sandbox: !livemode };
    }
    return null;
  }

  /** A real connector's credentials in clear, in memory only (the adapters), or null. */
  async credentialsFor(tenantId: string, livemode: boolean, key: string): Promise<Record<string, string> | null> {
    const [row] = await this.d.sql`select credentials_sealed from routing_connectors where tenant_id = ${tenantId} and livemode = ${livemode} and connector_key = ${key}`;
    if (!row?.credentials_sealed) return null;
    return JSON.parse(this.d.secrets.open(row.credentials_sealed as string, credContext(tenantId, livemode, key))) as Record<string, string>;
  }

  /** The routing decisions of the key's mode, newest first (one per attempt). */
  async decisions(p: Principal, q: { limit?: number; payment_intent?: string; starting_after?: string }) {
    const sql = this.d.readSql;
    const limit = Math.min(q.limit ?? 20, 100);
    let after = sql``;
    if (q.starting_after) {
      const [c] = await sql`select created_at, id from routing_decisions where id = ${q.starting_after} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
      if (!c) throw new ApiError('routing.invalid_query', 'starting_after is not a decision of this key.');
      after = sql`and (created_at, id) < (${c.created_at as Date}, ${c.id as string})`;
    }
    const rows = await sql`
      select * from routing_decisions
       where tenant_id = ${p.tenantId} and livemode = ${p.livemode}
             ${q.payment_intent ? sql`and payment_intent_id = ${q.payment_intent}` : sql``} ${after}
       order by created_at desc, id desc limit ${limit + 1}`;
    return { object: 'list' as const, data: rows.slice(0, limit).map(decisionView), has_more: rows.length > limit };
  }

  /** Per connector: attempts answered in the last 24 hours, authorization rate and latency. */
  async scores(p: Principal) {
    const rows = await this.d.readSql`
      select chosen as connector_key, count(*)::int as attempts,
             count(*) filter (where outcome in ('captured', 'authorized', 'action_required'))::int as approved,
             count(*) filter (where outcome = 'soft_decline')::int as soft_declines,
             count(*) filter (where outcome = 'hard_decline')::int as hard_declines,
             percentile_cont(0.5) within group (order by latency_ms)::int as p50,
             percentile_cont(0.95) within group (order by latency_ms)::int as p95
        from routing_decisions
       where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and answered_at is not null
         and answered_at > now() - make_interval(hours => ${SCORE_WINDOW_HOURS})
       group by chosen order by chosen`;
    return {
      object: 'list' as const,
      window_hours: SCORE_WINDOW_HOURS,
      data: rows.map((r) => ({
        object: 'routing_score' as const,
        connector_key: r.connector_key as string,
        attempts: r.attempts as number,
        approved: r.approved as number,
        soft_declines: r.soft_declines as number,
        hard_declines: r.hard_declines as number,
        authorization_rate: (r.attempts as number) ? Math.round(((r.approved as number) / (r.attempts as number)) * 10_000) / 10_000 : 0,
        latency_p50_ms: r.p50 as number,
        latency_p95_ms: r.p95 as number,
      })),
    };
  }
}

function decisionView(r: Record<string, unknown>) {
  return {
    id: r.id as string,
    object: 'routing_decision' as const,
    payment_intent_id: r.payment_intent_id as string,
    attempt_id: r.id as string,
    livemode: r.livemode as boolean,
    method: r.method as string,
    brand: (r.brand as string | null) ?? null,
    amount_minor: Number(r.amount_minor),
    currency: r.currency as string,
    candidates: r.candidates as unknown[],
    chosen: r.chosen as string,
    reason: r.reason as string,
    default_connector: (r.default_connector as string | null) ?? null,
    default_fee_minor: r.default_fee_minor === null ? null : Number(r.default_fee_minor),
    chosen_fee_minor: Number(r.chosen_fee_minor),
    saved_minor: r.default_fee_minor === null ? 0 : Math.max(Number(r.default_fee_minor) - Number(r.chosen_fee_minor), 0),
    outcome: (r.outcome as string | null) ?? null,
    latency_ms: (r.latency_ms as number | null) ?? null,
    created_at: (r.created_at as Date).toISOString(),
  };
}
