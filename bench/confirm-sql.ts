// The SQL of bench/confirm's pgbench variants, as the app sends it (one source for pgbench's
// scripts and for the bare stack of bench/skeleton-app, which runs the same statements through
// postgres.js, BullMQ and uWebSockets.js with no app code). pgbench variables (`:n`, `:v`) are
// the script's; skeletonStatements turns a script into parameterized statements (`$1` = n).

export const VARIANTS = ['writes', 'confirm-sql', 'chain-sql', 'chain-full-sql'] as const;
export type Variant = (typeof VARIANTS)[number];

export const TENANT = '7e4a0c1e-0000-4000-8000-00000000be4c';
/** n → a deterministic intent id, computed the same way in SQL and pgbench scripts. */
export const ID = (v: string) => `lpad(to_hex(cast(${v} as bigint)), 32, '0')::uuid`;

/** A realistic stored response of a confirm (the intent with one attempt), for the idempotency record. */
const CONFIRM_RESPONSE = JSON.stringify({
  id: '00000000-0000-0000-0000-000000000001',
  object: 'payment_intent',
  amount_minor: 15000,
  tip_minor: 0,
  total_minor: 15000,
  currency: 'MXN',
  status: 'processing',
  client_secret: 'pi_secret_' + 'x'.repeat(24),
  livemode: false,
  receipt_code: 'W-ABCDE',
  attempts: [{ id: '00000000-0000-0000-0000-000000000002', object: 'attempt', status: 'pending', connector_key: 'sim', method: 'card', amount_minor: 15000, currency: 'MXN', created_at: new Date().toISOString() }],
  created_at: new Date().toISOString(),
  updated_at: new Date().toISOString(),
})
  // pgbench would read `:false` or `:35` (of a timestamp) as a variable: no colon before a name character.
  .replace(/:(?=\w)/g, ': ')
  .replace(/'/g, "''");
const CREATE_RESPONSE = CONFIRM_RESPONSE.replace(/"attempts":\[.*?\],/, '').replace('processing', 'requires_payment_method');
const HISTORY_DATA = '{"attempt_id": "00000000-0000-0000-0000-000000000002", "outcome": null, "rule_id": null, "source": null}';
const EVENT_DATA = '{"id": "00000000-0000-0000-0000-000000000001", "object": "payment_intent", "status": "processing", "amount_minor": 15000, "tip_minor": 0, "total_minor": 15000, "currency": "MXN", "metadata": null}';

/**
 * n → the attempt id of intent n, and the journal entry of its capture (deterministic, as ID). The
 * padding makes an n whose hex starts with 'a' (or 'b') share its id with a smaller n (0xa5 and
 * 0x5): callers keep n in a range whose hex starts otherwise (pgbench from its seeded rows on,
 * bench/skeleton-app from 0x1000000).
 */
export const ATT = (v: string) => `lpad(to_hex(cast(${v} as bigint)), 32, 'a')::uuid`;
export const ENTRY = (v: string) => `lpad(to_hex(cast(${v} as bigint)), 32, 'b')::uuid`;
const oneLine = (xs: string[]) => xs.map((s) => s.replace(/\s*\n\s*/g, ' ')).join('\n');

/** The issue's "equivalent SQL" (the ratio's denominator), one statement after the other. */
export function confirmWrites(): string {
  const pi = ID(':n');
  return oneLine([
    'begin;',
    `insert into attempts (id, tenant_id, livemode, payment_intent_id, status, connector_key, method, amount_minor, currency, payment_token, provider_key)
       values (gen_random_uuid(), '${TENANT}', false, ${pi}, 'pending', 'sim', 'card', 15000, 'MXN', 'tok_sim_ok', 'orq_att_' || md5(random()::text)) returning *;`,
    `update payment_intents set status = 'processing', tip_minor = 0, next_action = null, last_error = null, version = version + 1, updated_at = now()
       where id = ${pi} and tenant_id = '${TENANT}' and version = :v returning updated_at, version;`,
    `insert into payment_intent_history (payment_intent_id, tenant_id, livemode, event, from_status, to_status, data)
       values (${pi}, '${TENANT}', false, 'confirm', 'requires_payment_method', 'processing', '${HISTORY_DATA}');`,
    `insert into outbox_events (event_id, tenant_id, livemode, event_type, entity_id, data) values (gen_random_uuid(), '${TENANT}', false, 'payment_intent.processing', ${pi}, '${EVENT_DATA}');`,
    'commit;',
  ]);
}

/** The confirm transition's transaction as actors/payment-intents.ts sends it: one pipelined flight. */
export function confirmTransition(): string {
  const pi = ID(':n');
  return oneLine([
    '\\startpipeline',
    'begin;',
    `insert into attempts (id, tenant_id, livemode, payment_intent_id, status, connector_key, method, amount_minor, currency, payment_token, provider_key, created_at, updated_at)
       values (${ATT(':n')}, '${TENANT}', false, ${pi}, 'pending', 'sim', 'card', 15000, 'MXN', 'tok_sim_ok', 'orq_att_' || cast(:n as text), now(), now());`,
    `with u as (update payment_intents set status = 'processing', tip_minor = 0, next_action = null, last_error = null, version = 1, updated_at = now()
       where id = ${pi} and tenant_id = '${TENANT}' and version = 0 returning 1) select orq_expect_rows(count(*), 'payment intent') as n from u;`,
    `insert into payment_intent_history (payment_intent_id, tenant_id, livemode, event, from_status, to_status, data)
       values (${pi}, '${TENANT}', false, 'confirm', 'requires_payment_method', 'processing', '${HISTORY_DATA}');`,
    `insert into idempotency_keys (tenant_id, livemode, key, request_hash, method, path, status_code, response_body)
       values ('${TENANT}', false, gen_random_uuid(), md5(random()::text) || md5(random()::text), 'POST', '/v1/payment_intents/' || ${pi} || '/confirm', 200, '${CONFIRM_RESPONSE}');`,
    'commit;',
    '\\endpipeline',
  ]);
}

/** actors/payment-intent-store.ts hydrate (with the risk rules for a confirm; scoped by tenant for the API). */
export function hydrateSql(forConfirm: boolean): string {
  const pi = ID(':n');
  return `select pi.*, coalesce(tc.offset_ms, 0) as clock_offset_ms,
      coalesce((select json_agg(a order by a.created_at, a.id) from attempts a where a.payment_intent_id = pi.id), '[]') as attempts_json,
      (select json_build_object('id', r.id, 'request', r.request) from risk_reviews r where r.payment_intent_id = pi.id and r.status = 'pending' limit 1) as review_json
      ${forConfirm ? `, coalesce((select json_agg(json_build_object('id', k.id, 'field', k.field, 'operator', k.operator, 'value', k.value, 'action', k.action) order by k.created_at) from risk_rules k where k.tenant_id = pi.tenant_id and k.active), '[]') as rules_json` : ''}
    from payment_intents pi left join test_clocks tc on tc.tenant_id = pi.tenant_id and not pi.livemode
    where pi.id = ${pi}${forConfirm ? ` and pi.tenant_id = '${TENANT}' and pi.livemode = false` : ''};`;
}

export function confirmReads(): string {
  return oneLine([
    // A key that is not there (the app's lookup misses too); md5() is immutable, so the primary key is used.
    `select request_hash, status_code, response_body from idempotency_keys where tenant_id = '${TENANT}' and livemode = false and key = md5(cast(:n as text) || 'confirm')::uuid;`,
    hydrateSql(true),
  ]);
}

/**
 * POST /v1/payment_intents: one statement (intent, history, idempotency record). The route looks
 * its idempotency key up only when that statement fails on it (idempotencyLookup: 'at_commit').
 */
export function createSqlScript(): string {
  const pi = ID(':n');
  return oneLine([
    `with intent as (insert into payment_intents (id, tenant_id, livemode, amount_minor, tip_minor, currency, status, client_secret, metadata, receipt_code, version, created_at, updated_at)
       values (${pi}, '${TENANT}', false, 15000, 0, 'MXN', 'requires_payment_method', 'pi_secret_' || md5(random()::text), null, 'W-' || cast(:n as text), 0, now(), now())),
     history as (insert into payment_intent_history (payment_intent_id, tenant_id, livemode, event, from_status, to_status, data)
       values (${pi}, '${TENANT}', false, 'create', null, 'requires_payment_method', '{"payment_method_types": ["card"]}')),
     idempotency_record as (insert into idempotency_keys (tenant_id, livemode, key, request_hash, method, path, status_code, response_body)
       values ('${TENANT}', false, gen_random_uuid(), md5(random()::text) || md5(random()::text), 'POST', '/v1/payment_intents', 201, '${CREATE_RESPONSE}'))
     select 1;`,
  ]);
}

/** The worker executing the attempt (actors/payment-intents.ts attempt.execute, connectors/sim.ts, the evidence step). */
export function executeSqlScript(): string {
  const pi = ID(':n');
  const att = ATT(':n');
  const entry = ENTRY(':n');
  // pgbench would read `:sim` as a variable: the colon ends a literal of its own.
  const line = (account: string, amount: number) => `(${entry}, '${TENANT}', false, ${account.split(':').map((p, i, a) => `'${p}${i < a.length - 1 ? ':' : ''}'`).join(' || ')}, 'MXN', ${amount})`;
  return oneLine([
    hydrateSql(false),
    `insert into sim_provider_calls (idempotency_key, kind, provider_ref, tenant_id, livemode, method, amount_minor, currency, token, outcome, charges)
       values ('orq_att_' || cast(:n as text), 'charge', 'sim_ch_' || cast(:n as text), '${TENANT}', false, 'card', 15000, 'MXN', 'tok_sim_ok', '{"kind": "captured", "providerRef": "sim_ch"}', 1)
       on conflict (idempotency_key, tenant_id) do update set calls = sim_provider_calls.calls + 1, updated_at = now() returning outcome, (xmax = 0) as inserted;`,
    '\\startpipeline',
    'begin;',
    `update attempts set status = 'captured', provider_ref = 'sim_ch_' || cast(:n as text), failure_code = null, failure_message = null, decline = null, capture_requested_at = null, fee_minor = 435,
       payment_token = case when 'captured' in ('pending', 'authorized') then payment_token else null end, updated_at = now() where id = ${att} and tenant_id = '${TENANT}';`,
    `with u as (update payment_intents set status = 'succeeded', tip_minor = 0, next_action = null, last_error = null, version = 2, updated_at = now()
       where id = ${pi} and tenant_id = '${TENANT}' and version = 1 returning 1) select orq_expect_rows(count(*), 'payment intent') as n from u;`,
    `insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id, memo) values (${entry}, '${TENANT}', false, 'charge.captured', 'attempt', ${att}, 'capture of payment intent');`,
    `insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor) values
       ${[line('connector_receivable:sim', 15000), line('sales', -15000), line('connector_fees:sim', 435), line('connector_receivable:sim', -435)].join(', ')};`,
    `insert into payment_intent_history (payment_intent_id, tenant_id, livemode, event, from_status, to_status, data)
       values (${pi}, '${TENANT}', false, 'evidence.captured', 'processing', 'succeeded', '${HISTORY_DATA}');`,
    `insert into outbox_events (event_id, tenant_id, livemode, event_type, entity_id, data) values (gen_random_uuid(), '${TENANT}', false, 'payment_intent.succeeded', ${pi}, '${EVENT_DATA}');`,
    'commit;',
    '\\endpipeline',
  ]);
}

export function pgbenchScript(v: Variant): string {
  // Each client walks its own intents: n = base + i * clients + client_id, i = 1, 2, … (pgbench
  // variables persist across a client's transactions), so no two transactions touch one intent.
  const head = ['\\set i :i + 1', '\\set n :base + :i * :nc + :client_id', '\\set v 0'];
  if (v === 'writes') return [...head, confirmWrites()].join('\n') + '\n';
  if (v === 'confirm-sql') return [...head, confirmReads(), confirmTransition()].join('\n') + '\n';
  if (v === 'chain-sql') return [...head, createSqlScript(), confirmReads(), confirmTransition()].join('\n') + '\n';
  return [...head, createSqlScript(), confirmReads(), confirmTransition(), executeSqlScript()].join('\n') + '\n';
}

/** A step of the bare stack: a statement awaited on its own, or a transaction pipelined in one flight. */
export type SkeletonStep = { statement: string } | { transaction: string[] };

/**
 * A pgbench script (one statement per line, `begin;` … `commit;` between pipeline marks) as the
 * bare stack sends it: the variables `vars` name (`:n`, …) become the parameters `$1`, … (so the
 * statements are prepared once per connection, as pgbench's `-M prepared` and the app's tagged
 * templates are), the statements between begin and commit form one pipelined transaction, `\set`
 * lines (the caller gives the values) are skipped. Any other pgbench variable is an error: the bare
 * stack must send exactly what pgbench does.
 */
export function skeletonSteps(script: string, vars: string[] = ['n']): SkeletonStep[] {
  const steps: SkeletonStep[] = [];
  let tx: string[] | undefined;
  for (const raw of script.split('\n')) {
    const line = raw.trim();
    if (!line || line === '\\startpipeline' || line === '\\endpipeline' || line.startsWith('\\set ')) continue;
    if (line === 'begin;') {
      tx = [];
      continue;
    }
    if (line === 'commit;') {
      if (!tx) throw new Error('skeletonSteps: commit without begin');
      steps.push({ transaction: tx });
      tx = undefined;
      continue;
    }
    const text = vars.reduce((t, v, i) => t.replace(new RegExp(`:${v}\\b`, 'g'), () => `$${i + 1}`), line.replace(/;$/, ''));
    const other = /(?<!:):[a-z_]\w*/i.exec(text.replace(/'(?:[^']|'')*'/g, "''"));
    if (other) throw new Error(`skeletonSteps: pgbench variable ${other[0]} in ${text.slice(0, 80)}`);
    if (tx) tx.push(text);
    else steps.push({ statement: text });
  }
  if (tx) throw new Error('skeletonSteps: begin without commit');
  return steps;
}

/** The chain's three requests as the bare stack runs them (create, confirm, the worker's execution). */
export const skeletonChain = () => ({
  create: skeletonSteps(createSqlScript()),
  confirm: skeletonSteps(confirmReads() + '\n' + confirmTransition()),
  execute: skeletonSteps(executeSqlScript()),
});
