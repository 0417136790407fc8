// The operators' audit log (migration 0150, docs/operator.md): who did what, when, why, with the
// state before and after. A row is written in the same transaction as the change it records (an
// entity step's `writes`, or `appendAudit` in the transaction of a change that is not an entity
// step), so a change without its audit row cannot commit. The table refuses updates, deletes and
// truncation (trigger): the log is append-only.
import { randomUUID } from 'node:crypto';
import type { Db, Sql } from '../kernel/db.js';
import type { StepEnv, Write } from '../kernel/entity.js';

export type AuditActorKind = 'admin_key' | 'operator' | 'member' | 'system';

/** Who acts: the shared admin key, a named operator, a merchant's member. */
export interface AuditActor {
  kind: AuditActorKind;
  id: string;
  name?: string;
}

/** The shared `X-Admin-Key` (decisions.md §2): one key, no name behind it. */
export const ADMIN_KEY_ACTOR: AuditActor = { kind: 'admin_key', id: 'admin_key', name: 'X-Admin-Key' };

export interface AuditEntry {
  actor: AuditActor;
  /** `<target kind>.<verb>`, e.g. `terminal.activate`, `onboarding_application.approve`. */
  action: string;
  tenantId?: string;
  livemode?: boolean;
  targetKind?: string;
  targetId?: string;
  reason?: string;
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
  requestId?: string;
}

function auditRow(id: string, at: Date, e: AuditEntry): Record<string, unknown> {
  return {
    id,
    at,
    actor_kind: e.actor.kind,
    actor_id: e.actor.id,
    actor_name: e.actor.name ?? null,
    action: e.action,
    tenant_id: e.tenantId ?? null,
    livemode: e.livemode ?? null,
    target_kind: e.targetKind ?? null,
    target_id: e.targetId ?? null,
    reason: e.reason ?? null,
    before: e.before ?? null,
    after: e.after ?? null,
    request_id: e.requestId ?? null,
  };
}

/** The audit row of an entity step (a plan's `writes`): committed with the step or not at all. */
export function auditWrite(env: StepEnv, e: AuditEntry): Write {
  return { op: 'insert', table: 'audit_log', row: auditRow(env.newId(), env.at, e) };
}

/** Appends an audit row with the given connection (a transaction's, to commit it with the change). */
export async function appendAudit(db: Db, e: AuditEntry, at = new Date()): Promise<void> {
  const r = auditRow(randomUUID(), at, e);
  await db`
    insert into audit_log (id, at, actor_kind, actor_id, actor_name, action, tenant_id, livemode, target_kind, target_id, reason, before, after, request_id)
    values (${r.id as string}, ${at}, ${r.actor_kind as string}, ${r.actor_id as string}, ${r.actor_name as string | null}, ${r.action as string},
            ${r.tenant_id as string | null}, ${r.livemode as boolean | null}, ${r.target_kind as string | null}, ${r.target_id as string | null},
            ${r.reason as string | null}, ${e.before ? db.json(e.before as never) : null}, ${e.after ? db.json(e.after as never) : null}, ${r.request_id as string | null})`;
}

export interface AuditQuery {
  tenant_id?: string;
  target_id?: string;
  actor_id?: string;
  action?: string;
  /** Rows with seq below this (the `next_cursor` of the previous page). */
  before_seq?: number;
  limit?: number;
}

export interface AuditRecord {
  seq: number;
  id: string;
  object: 'audit_entry';
  at: string;
  actor: { kind: AuditActorKind; id: string; name?: string };
  action: string;
  tenant_id?: string;
  livemode?: boolean;
  target?: { kind: string; id: string };
  reason?: string;
  before?: unknown;
  after?: unknown;
  request_id?: string;
}

export function auditView(r: Record<string, unknown>): AuditRecord {
  return {
    seq: Number(r.seq),
    id: r.id as string,
    object: 'audit_entry',
    at: (r.at as Date).toISOString(),
    actor: { kind: r.actor_kind as AuditActorKind, id: r.actor_id as string, ...(r.actor_name ? { name: r.actor_name as string } : {}) },
    action: r.action as string,
    ...(r.tenant_id ? { tenant_id: r.tenant_id as string } : {}),
    ...(r.livemode !== null && r.livemode !== undefined ? { livemode: r.livemode as boolean } : {}),
    ...(r.target_kind ? { target: { kind: r.target_kind as string, id: r.target_id as string } } : {}),
    ...(r.reason ? { reason: r.reason as string } : {}),
    ...(r.before ? { before: r.before } : {}),
    ...(r.after ? { after: r.after } : {}),
    ...(r.request_id ? { request_id: r.request_id as string } : {}),
  };
}

/** The listing's and the export's filters (every one optional). */
function auditFilter(sql: Sql, q: Pick<AuditQuery, 'tenant_id' | 'target_id' | 'actor_id' | 'action'>) {
  return sql`
    ${q.tenant_id ? sql`and tenant_id = ${q.tenant_id}` : sql``}
    ${q.target_id ? sql`and target_id = ${q.target_id}` : sql``}
    ${q.actor_id ? sql`and actor_id = ${q.actor_id}` : sql``}
    ${q.action ? sql`and action = ${q.action}` : sql``}`;
}

/** Newest first; operator listings: default 100, maximum 500 (spec: Limits). */
export async function listAudit(sql: Sql, q: AuditQuery): Promise<{ object: 'list'; data: AuditRecord[]; has_more: boolean; next_cursor?: string }> {
  const limit = Math.min(Math.max(q.limit ?? 100, 1), 500);
  const rows = await sql`
    select * from audit_log
     where true
       ${auditFilter(sql, q)}
       ${q.before_seq !== undefined ? sql`and seq < ${q.before_seq}` : sql``}
     order by seq desc limit ${limit + 1}`;
  const data = rows.slice(0, limit).map(auditView);
  const more = rows.length > limit;
  return { object: 'list', data, has_more: more, ...(more ? { next_cursor: String(data[data.length - 1]!.seq) } : {}) };
}

const CSV_COLUMNS = ['seq', 'id', 'at', 'actor_kind', 'actor_id', 'actor_name', 'action', 'tenant_id', 'livemode', 'target_kind', 'target_id', 'reason', 'before', 'after', 'request_id'] as const;

function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = v instanceof Date ? v.toISOString() : typeof v === 'object' ? JSON.stringify(v) : String(v);
  // A cell a spreadsheet would read as a formula is prefixed with a quote (CSV injection).
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The whole log (or a tenant's / a target's), oldest first, as CSV (RFC 4180) or JSON Lines. */
export async function exportAudit(sql: Sql, q: Pick<AuditQuery, 'tenant_id' | 'target_id' | 'actor_id' | 'action'>, format: 'csv' | 'jsonl'): Promise<string> {
  const rows = await sql`
    select * from audit_log
     where true
       ${auditFilter(sql, q)}
     order by seq`;
  if (format === 'jsonl') return rows.map((r) => JSON.stringify(auditView(r))).join('\n') + (rows.length ? '\n' : '');
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of rows) lines.push(CSV_COLUMNS.map((c) => csvCell(r[c])).join(','));
  return lines.join('\r\n') + '\r\n';
}
