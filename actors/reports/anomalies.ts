// Anomalies: what an operations person wants to look at, each row saying why it was flagged.
// Rules (docs/reports.md "Anomaly rules"), all computed from data the service keeps:
//   decline_rate_spike   a day's card decline rate far above the 28 days before it
//   refund_rate_spike    a day's refunds per captured charge far above the 28 days before it
//   amount_mismatch      a charge captured (or booked) for another amount than the intent's total
//   duplicate_charge     the same card charged the same total again within 10 minutes
//   stale_processing     an intent still `processing` an hour after its last change
import { prefixOf } from '../../kernel/accounts.js';
import { nowFor } from '../../kernel/clock.js';
import type { Sql } from '../../kernel/db.js';
import type { Principal } from '../../kernel/principal.js';
import { BOOKS_TIME_ZONE, addDays, instantWindow, localDate, startOfLocalDate } from './period.js';

export const ANOMALY_RULES = {
  baselineDays: 28,
  /** A day is judged only with at least this many finished attempts (or captured charges). */
  minDaySample: 20,
  /** ... and a baseline of at least this many. */
  minBaselineSample: 50,
  /** Flag when the day's rate exceeds the usual by this much (absolute) and by 3 standard errors. */
  minDeclineExcess: 0.1,
  minRefundExcess: 0.05,
  zScore: 3,
  duplicateWindowSeconds: 600,
  staleProcessingMinutes: 60,
  defaultDays: 30,
} as const;

export interface Anomaly {
  object: 'anomaly';
  rule: 'decline_rate_spike' | 'refund_rate_spike' | 'amount_mismatch' | 'duplicate_charge' | 'stale_processing';
  reason: string;
  day?: string;
  occurred_at?: string;
  payment_intent_id?: string;
  attempt_id?: string;
  related_payment_intent_id?: string;
  observed_rate?: number;
  usual_rate?: number;
  sample_size?: number;
  expected_minor?: number;
  observed_minor?: number;
}

/** `connector_receivable:%` as a LIKE pattern (the `_` escaped). */
const RECEIVABLE_LIKE = `${prefixOf('connector_receivable').replace(/_/g, '\\_')}%`;
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** Days of [from, to) whose rate is far above the pooled rate of the 28 days before each. */
function spikes(days: Map<string, { n: number; k: number }>, from: string, to: string, minExcess: number) {
  const out: Array<{ day: string; n: number; k: number; rate: number; usual: number; baseN: number }> = [];
  for (let day = from; day < to; day = addDays(day, 1)) {
    const d = days.get(day);
    if (!d || d.n < ANOMALY_RULES.minDaySample) continue;
    let baseN = 0;
    let baseK = 0;
    for (let i = 1; i <= ANOMALY_RULES.baselineDays; i++) {
      const b = days.get(addDays(day, -i));
      if (b) {
        baseN += b.n;
        baseK += b.k;
      }
    }
    if (baseN < ANOMALY_RULES.minBaselineSample) continue;
    const usual = baseK / baseN;
    const rate = d.k / d.n;
    const se = Math.sqrt(Math.max(usual * (1 - usual), 1e-9) / d.n);
    if (rate - usual >= Math.max(minExcess, ANOMALY_RULES.zScore * se)) out.push({ day, n: d.n, k: d.k, rate, usual, baseN });
  }
  return out;
}

export async function anomalies(deps: { readSql: Sql }, p: Principal, q: { from?: string; to?: string }) {
  const sql = deps.readSql;
  const w = await instantWindow(sql, p, q, ANOMALY_RULES.defaultDays);
  const now = await nowFor(sql, p.tenantId, p.livemode);
  const firstDay = localDate(w.from.at);
  // The last day that starts inside the window.
  const lastDay = localDate(new Date(w.to.at.getTime() - 1));
  const dayTo = addDays(lastDay, 1);
  const baseFrom = startOfLocalDate(addDays(firstDay, -ANOMALY_RULES.baselineDays));
  const dayEnd = startOfLocalDate(dayTo);

  const [attemptDays, refundDays, mismatches, duplicates, stale] = await Promise.all([
    sql`
      select to_char(created_at at time zone ${BOOKS_TIME_ZONE}, 'YYYY-MM-DD') as day, count(*)::int as n, count(*) filter (where status = 'failed')::int as k
        from attempts
       where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and method = 'card'
         and status in ('captured', 'settled', 'partially_refunded', 'refunded', 'failed', 'authorized')
         and created_at >= ${baseFrom} and created_at < ${dayEnd}
       group by 1`,
    sql`
      select to_char(occurred_at at time zone ${BOOKS_TIME_ZONE}, 'YYYY-MM-DD') as day,
             count(*) filter (where kind = 'charge')::int as n, count(*) filter (where kind = 'refund')::int as k
        from cash_facts_now
       where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and occurred_at >= ${baseFrom} and occurred_at < ${dayEnd}
       group by 1`,
    sql`
      select c.payment_intent_id, c.attempt_id, c.occurred_at, c.currency, c.amount_minor + c.tip_minor as expected, a.amount_minor as attempted,
             (select coalesce(sum(l.amount_minor), 0) from journal_lines l where l.entry_id = c.entry_id and l.tenant_id = c.tenant_id and l.amount_minor > 0 and l.account like ${RECEIVABLE_LIKE})::bigint as booked
        from cash_facts_now c join attempts a on a.id = c.attempt_id and a.tenant_id = c.tenant_id
       where c.tenant_id = ${p.tenantId} and c.livemode = ${p.livemode} and c.kind = 'charge'
         and c.occurred_at >= ${w.from.at} and c.occurred_at < ${w.to.at}
         and (a.amount_minor <> c.amount_minor + c.tip_minor
              or (select coalesce(sum(l.amount_minor), 0) from journal_lines l where l.entry_id = c.entry_id and l.tenant_id = c.tenant_id and l.amount_minor > 0 and l.account like ${RECEIVABLE_LIKE}) <> c.amount_minor + c.tip_minor)
       order by c.occurred_at, c.attempt_id`,
    sql`
      select * from (
        select payment_intent_id, attempt_id, occurred_at, currency, amount_minor + tip_minor as total,
               lag(payment_intent_id) over w as prev_intent, lag(occurred_at) over w as prev_at
          from cash_facts_now
         where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and kind = 'charge' and card_fingerprint is not null
           and occurred_at >= ${new Date(w.from.at.getTime() - ANOMALY_RULES.duplicateWindowSeconds * 1000)} and occurred_at < ${w.to.at}
        window w as (partition by card_fingerprint, currency, amount_minor + tip_minor order by occurred_at, attempt_id)) x
       where prev_at is not null and occurred_at - prev_at <= make_interval(secs => ${ANOMALY_RULES.duplicateWindowSeconds})
         and occurred_at >= ${w.from.at}
       order by occurred_at, attempt_id`,
    sql`
      select id, updated_at from payment_intents
       where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and status = 'processing'
         and updated_at < ${new Date(now.getTime() - ANOMALY_RULES.staleProcessingMinutes * 60_000)}
         and updated_at >= ${w.from.at} and updated_at < ${w.to.at}
       order by updated_at, id`,
  ]);

  const data: Anomaly[] = [];
  const asMap = (rows: readonly Record<string, unknown>[]) => new Map(rows.map((r) => [r.day as string, { n: Number(r.n), k: Number(r.k) }]));
  for (const s of spikes(asMap(attemptDays), firstDay, dayTo, ANOMALY_RULES.minDeclineExcess)) {
    data.push({
      object: 'anomaly', rule: 'decline_rate_spike', day: s.day, observed_rate: round4(s.rate), usual_rate: round4(s.usual), sample_size: s.n,
      reason: `On ${s.day}, ${s.k} of ${s.n} card attempts were declined (${pct(s.rate)}); over the ${ANOMALY_RULES.baselineDays} days before, ${pct(s.usual)} of ${s.baseN} were.`,
    });
  }
  for (const s of spikes(asMap(refundDays), firstDay, dayTo, ANOMALY_RULES.minRefundExcess)) {
    data.push({
      object: 'anomaly', rule: 'refund_rate_spike', day: s.day, observed_rate: round4(s.rate), usual_rate: round4(s.usual), sample_size: s.n,
      reason: `On ${s.day}, ${s.k} refunds succeeded against ${s.n} captured charges (${pct(s.rate)}); over the ${ANOMALY_RULES.baselineDays} days before, the ratio was ${pct(s.usual)} over ${s.baseN} charges.`,
    });
  }
  for (const m of mismatches) {
    const expected = Number(m.expected);
    const attempted = Number(m.attempted);
    const booked = Number(m.booked);
    const observed = attempted !== expected ? attempted : booked;
    data.push({
      object: 'anomaly', rule: 'amount_mismatch', payment_intent_id: m.payment_intent_id as string, attempt_id: m.attempt_id as string,
      occurred_at: (m.occurred_at as Date).toISOString(), expected_minor: expected, observed_minor: observed,
      reason: `The intent's total is ${expected} ${m.currency as string} minor units but the charge was ${attempted !== expected ? `sent to the connector for ${attempted}` : ''}${attempted !== expected && booked !== expected ? ' and ' : ''}${booked !== expected ? `booked as ${booked} owed by the connector` : ''}.`,
    });
  }
  for (const d of duplicates) {
    const secs = Math.round(((d.occurred_at as Date).getTime() - (d.prev_at as Date).getTime()) / 1000);
    data.push({
      object: 'anomaly', rule: 'duplicate_charge', payment_intent_id: d.payment_intent_id as string, attempt_id: d.attempt_id as string,
      related_payment_intent_id: d.prev_intent as string, occurred_at: (d.occurred_at as Date).toISOString(), observed_minor: Number(d.total),
      reason: `The same card was charged ${Number(d.total)} ${d.currency as string} minor units ${secs} s after payment intent ${d.prev_intent as string} was charged the same total.`,
    });
  }
  for (const s of stale) {
    const mins = Math.floor((now.getTime() - (s.updated_at as Date).getTime()) / 60_000);
    data.push({
      object: 'anomaly', rule: 'stale_processing', payment_intent_id: s.id as string, occurred_at: (s.updated_at as Date).toISOString(),
      reason: `The intent has been processing for ${mins} minutes with no provider evidence (an authorization waiting for capture, or an unanswered provider).`,
    });
  }
  return { object: 'list' as const, livemode: p.livemode, period_from: w.from.at.toISOString(), period_to: w.to.at.toISOString(), data };
}
