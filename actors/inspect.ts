// What an operator sees of a payment, refund, payout or invoice besides its fields (docs/operator.md):
// every step it went through with the OpenTelemetry trace id of that step (entity_history /
// payment_intent_history, migration 0151) and a link built from TRACE_URL_TEMPLATE, and the job
// history (each run of each job that named it: attempt, outcome, error, trace) from
// kernel/job-history.ts. A payment intent's view includes its attempts' jobs.
import type { Sql } from '../kernel/db.js';
import { ApiError } from '../kernel/errors.js';
import type { ErrorCode } from '../kernel/error-catalog.js';
import type { JobHistory, JobRun } from '../kernel/job-history.js';

export const INSPECT_KINDS = ['payment_intent', 'refund', 'payout', 'invoice'] as const;
export type InspectKind = (typeof INSPECT_KINDS)[number];

const TABLE: Record<InspectKind, { table: string; notFound: ErrorCode }> = {
  payment_intent: { table: 'payment_intents', notFound: 'payment_intent.not_found' },
  refund: { table: 'refunds', notFound: 'refund.not_found' },
  payout: { table: 'payouts', notFound: 'payout.not_found' },
  invoice: { table: 'invoices', notFound: 'invoice.not_found' },
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface InspectDeps {
  sql: Sql;
  jobHistory?: JobHistory;
  /** TRACE_URL_TEMPLATE: `{trace_id}` is replaced. */
  traceUrlTemplate?: string;
}

export function traceUrl(template: string | undefined, traceId: string | null | undefined): string | undefined {
  return template && traceId && /^[0-9a-f]{32}$/.test(traceId) ? template.replace(/\{trace_id\}/g, traceId) : undefined;
}

export async function inspect(d: InspectDeps, tenantId: string, kind: InspectKind, id: string) {
  const t = TABLE[kind];
  const sql = d.sql;
  const [row] = UUID.test(id) ? await sql`select id, livemode, status, created_at from ${sql(t.table)} where id = ${id} and tenant_id = ${tenantId}` : [];
  if (!row) throw new ApiError(t.notFound);
  const history =
    kind === 'payment_intent'
      ? await sql`select event, from_status, to_status, created_at, trace_id from payment_intent_history where payment_intent_id = ${id} order by id`
      : await sql`select event, from_status, to_status, created_at, trace_id from entity_history where entity_id = ${id} and entity_kind = ${kind} order by id`;
  const link = (traceId: string | null | undefined) => {
    const url = traceUrl(d.traceUrlTemplate, traceId);
    return { ...(traceId ? { trace_id: traceId } : {}), ...(url ? { trace_url: url } : {}) };
  };
  const steps = history.map((h) => ({
    at: (h.created_at as Date).toISOString(),
    event: h.event as string,
    ...(h.from_status ? { from_status: h.from_status as string } : {}),
    to_status: h.to_status as string,
    ...link(h.trace_id as string | null),
  }));
  // The jobs that named this object, and for an intent those that named its attempts.
  const ids = [id];
  if (kind === 'payment_intent') ids.push(...(await sql`select id from attempts where payment_intent_id = ${id} order by created_at`).map((a) => a.id as string));
  const runs: JobRun[] = [];
  const seen = new Set<string>();
  for (const x of ids) {
    for (const r of (await d.jobHistory?.of(x)) ?? []) {
      const k = `${r.job_id}|${r.attempt}|${r.started_at}`;
      if (!seen.has(k)) runs.push(r), seen.add(k);
    }
  }
  runs.sort((a, b) => (a.started_at < b.started_at ? -1 : a.started_at > b.started_at ? 1 : 0));
  const jobs = runs.map((r) => ({ ...r, ...link(r.trace_id) }));
  const traceIds = [...new Set([...history.map((h) => h.trace_id as string | null), ...runs.map((r) => r.trace_id ?? null)].filter((x): x is string => !!x))];
  return {
    object: 'inspection' as const,
    kind,
    id,
    livemode: row.livemode as boolean,
    status: row.status as string,
    created_at: (row.created_at as Date).toISOString(),
    steps,
    jobs,
    traces: traceIds.map((tid) => link(tid) as { trace_id: string; trace_url?: string }),
    job_history: d.jobHistory?.enabled ? ('recorded' as const) : ('off' as const),
    ...(d.traceUrlTemplate ? {} : { trace_links: 'TRACE_URL_TEMPLATE is unset: trace ids only' }),
  };
}
