// Receivables against the running service (issue 15, docs/receivables.md): every code of the
// spec, Idempotency-Key replay, the single-use link and its /pay page, paid through the link with
// SPEI (operator simulation) in the same transaction as the payment, overdue by the test clock
// (timer + event) and the ageing buckets at 10/45/75/120 days, cancel, list filters and cursor,
// statement, WhatsApp link.
import t from 'tap';
import { startTestApp, type TestApp, until } from './helpers/app.js';
import { base, payWithCard, payWithSpei } from './helpers/receivables.js';

let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const DAY = 86_400;

const create = (body: unknown, key = ten.testKey, headers: Record<string, string> = idem()) => a.call('POST', '/v1/receivables', { key, body, headers });
const get = (id: string, key = ten.testKey) => a.call('GET', `/v1/receivables/${id}`, { key });

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000', RATE_LIMIT_PUBLIC_PER_MIN: '100000', SWEEP_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500' });
  ten = await a.newTenant('Tornillos del Norte');
});
t.teardown(() => a.stop());

t.test('create: the projection, the single-use link and its /pay page, replay with the same key', async (t) => {
  const h = idem();
  const body = base({ customer_phone: '55 1234 5678', metadata: { pedido: 'A-17' } });
  const r = await create(body, ten.testKey, h);
  t.equal(r.status, 201, r.text);
  const rv = r.body;
  t.match(rv, {
    object: 'receivable', customer_name: 'Ferretería Don Pepe', customer_email: 'pagos@donpepe.mx', concepto: 'Factura de tornillería noviembre',
    amount_minor: 125_050, currency: 'MXN', status: 'open', livemode: false, invoice_status: 'none', metadata: { pedido: 'A-17' },
  });
  t.equal(rv.customer_phone, '55****5678', 'the phone is answered masked');
  t.match(rv.id, /^[0-9a-f-]{36}$/);
  t.match(rv.payment_link_url, /^\/pay\/[a-z2-9]{12}$/);
  t.notOk('customer_rfc' in rv, 'absent fiscal fields are omitted, never null');
  const again = await create(body, ten.testKey, h);
  t.equal(again.status, 201);
  t.same(again.body, rv, 'a replay answers the same receivable and link');
  const [{ n }] = await a.app.deps.sql`select count(*)::int as n from receivables where tenant_id = ${ten.id}::uuid and payment_link_id = ${rv.payment_link_id}`;
  t.equal(n, 1, 'one receivable for the key');
  const reused = await create({ ...body, amount_minor: 1 }, ten.testKey, h);
  t.equal(reused.status, 422, 'the same key with another body');

  const link = await a.call('GET', `/v1/payment_links/${rv.payment_link_id}`, { key: ten.testKey });
  t.match(link.body, { id: rv.payment_link_id, url: rv.payment_link_url, amount_minor: 125_050, currency: 'MXN', concepto: rv.concepto, reusable: false, active: true, metadata: { receivable_id: rv.id } });
  const page = await a.call('GET', rv.payment_link_url);
  t.equal(page.status, 200);
  const intentId = /data-payment-intent="([0-9a-f-]{36})"/.exec(page.text)?.[1];
  t.ok(intentId, 'the page carries the intent it pays');
  const again2 = await a.call('GET', rv.payment_link_url);
  t.match(again2.text, new RegExp(`data-payment-intent="${intentId}"`), 'single-use: the same intent while unpaid');
  const cfg = await a.call('GET', `/public/payment_intents/${intentId}/checkout-config`, { headers: { 'x-service-client-secret': /data-client-secret="([^"]+)"/.exec(page.text)![1]! } });
  t.match(cfg.body, { amount_minor: 125_050, concepto: rv.concepto, allowed_methods: ['card', 'spei', 'codi', 'oxxo'] }, 'the checkout offers every rail');

  t.same((await get(rv.id)).body, rv, 'GET answers the same');
  const other = await a.newTenant('Otro');
  t.equal((await get(rv.id, other.testKey)).body.error.code, 'receivable.not_found', 'another tenant: not found');
  t.equal((await get(rv.id, ten.liveKey)).body.error.code, 'receivable.not_found', 'another mode: not found');
  t.equal((await get('nope')).body.error.code, 'receivable.not_found');
  t.equal((await get(crypto.randomUUID())).status, 404);
});

t.test('create: every validation code', async (t) => {
  const cases: Array<[string, object, string, number?]> = [
    ['no customer_name', { customer_name: undefined }, 'receivable.missing_fields'],
    ['empty customer_name', { customer_name: '  ' }, 'receivable.missing_fields'],
    ['no customer_email', { customer_email: undefined }, 'receivable.missing_fields'],
    ['no concepto', { concepto: undefined }, 'receivable.missing_fields'],
    ['amount 0', { amount_minor: 0 }, 'receivable.invalid_amount'],
    ['amount negative', { amount_minor: -5 }, 'receivable.invalid_amount'],
    ['amount float', { amount_minor: 10.5 }, 'receivable.invalid_amount'],
    ['amount string', { amount_minor: '100' }, 'receivable.invalid_amount'],
    ['no amount', { amount_minor: undefined }, 'receivable.invalid_amount'],
    ['currency lower', { currency: 'mxn' }, 'receivable.invalid_currency'],
    ['currency unknown', { currency: 'XYZ' }, 'receivable.invalid_currency'],
    ['no currency', { currency: undefined }, 'receivable.invalid_currency'],
    ['date garbage', { due_date: 'mañana' }, 'receivable.invalid_date'],
    ['date impossible', { due_date: '2026-02-30' }, 'receivable.invalid_date'],
    ['date without offset', { due_date: '2026-12-01T10:00:00' }, 'receivable.invalid_date'],
    ['date number', { due_date: 20261201 }, 'receivable.invalid_date'],
    ['no date', { due_date: undefined }, 'receivable.invalid_date'],
    ['one fiscal field', { customer_rfc: 'EKU9003173C9' }, 'receivable.incomplete_fiscal_receptor'],
    ['three fiscal fields', { customer_rfc: 'EKU9003173C9', customer_uso_cfdi: 'G03', customer_cp: '26015' }, 'receivable.incomplete_fiscal_receptor'],
    ['four fiscal fields, bad RFC', { customer_rfc: 'NOPE', customer_uso_cfdi: 'G03', customer_regimen_fiscal: '601', customer_cp: '26015' }, 'receivable.invalid_fiscal_receptor'],
    ['bad phone', { customer_phone: '12345' }, 'receivable.invalid_phone'],
    ['unknown ppd invoice', { ppd_invoice_id: crypto.randomUUID() }, 'receivable.invalid_invoice'],
  ];
  for (const [name, change, code] of cases) {
    const body = Object.fromEntries(Object.entries(base(change)).filter(([, v]) => v !== undefined));
    const r = await create(body);
    t.equal(r.status, 400, `${name}: 400`);
    t.equal(r.body?.error?.code, code, `${name}: ${code} (${r.body?.error?.message})`);
  }
  const noKey = await a.call('POST', '/v1/receivables', { key: ten.testKey, body: base() });
  t.equal(noKey.body.error.code, 'idempotency_key_required', 'Idempotency-Key is required');
  const [{ n }] = await a.app.deps.sql`select count(*)::int as n from receivables where tenant_id = ${ten.id}::uuid and concepto = 'never'`;
  t.equal(n, 0);
  const dateOnly = await create(base({ due_date: '2026-12-31' }));
  t.equal(dateOnly.body.due_date, '2027-01-01T05:59:59.999Z', 'a date is the end of that day in Mexico City');
  const intl = await create(base({ customer_phone: '+1 (415) 555-0100' }));
  t.equal(intl.status, 201);
});

t.test('paid through its link with SPEI: paid in the payment transaction, event, statement', async (t) => {
  const email = `spei-${Date.now()}@cliente.mx`;
  const r = (await create(base({ customer_email: email, amount_minor: 50_000 }))).body;
  const open2 = (await create(base({ customer_email: email, amount_minor: 7_000 }))).body;
  const intentId = await payWithSpei(a, ten.id, ten.testKey, r.payment_link_url);
  const paid = await until(() => get(r.id), (x) => x.body.status === 'paid');
  t.match(paid.body, { status: 'paid', payment_intent_id: intentId, invoice_status: 'none' });
  t.ok(paid.body.paid_at);
  const pi = await a.call('GET', `/v1/payment_intents/${intentId}`, { key: ten.testKey });
  t.equal(pi.body.status, 'succeeded');
  t.equal(pi.body.metadata.receivable_id, r.id);
  // Same transaction: the receivable's history row, the intent's success and the link's paid_at share one xact id.
  const [x] = await a.app.deps.sql`
    select (select xmin::text from receivables where id = ${r.id}) as rx, (select xmin::text from payment_intents where id = ${intentId}) as px,
           (select xmin::text from payment_links where id = ${r.payment_link_id}) as lx`;
  t.equal(x.rx, x.px, 'the receivable row was written by the transaction that made the intent succeed');
  t.equal(x.lx, x.px, 'and so was the link');
  const ev = await a.app.deps.sql`select event_type, data from outbox_events where entity_id = ${r.id}`;
  t.same(ev.map((e) => e.event_type), ['receivable.paid'], 'one receivable.paid event');
  t.match(ev[0].data, { id: r.id, object: 'receivable', status: 'paid', payment_intent_id: intentId });
  const page = await a.call('GET', r.payment_link_url);
  t.match(page.text, /data-testid="link-paid"/, 'the page says it is paid');
  const again = await a.call('POST', `/public/payment_links/${r.payment_link_url.split('/').pop()}/intent`, {});
  t.equal(again.status, 404, 'a paid single-use link opens no new intent');

  const st = await a.call('GET', `/v1/receivables/statement?customer_email=${encodeURIComponent(email.toUpperCase())}`, { key: ten.testKey });
  t.equal(st.status, 200, st.text);
  t.match(st.body, { object: 'receivable_statement', customer_email: email, currency: 'MXN', total_paid_minor: 50_000, total_open_minor: 7_000, total_overdue_minor: 0 });
  t.same(st.body.receivables.map((x: any) => x.id).sort(), [r.id, open2.id].sort());
  const empty = await a.call('GET', '/v1/receivables/statement?customer_email=nadie@x.mx', { key: ten.testKey });
  t.match(empty.body, { receivables: [], total_open_minor: 0, total_overdue_minor: 0, total_paid_minor: 0 });
  const missing = await a.call('GET', '/v1/receivables/statement', { key: ten.testKey });
  t.equal(missing.body.error.code, 'receivable.missing_fields');
});

t.test('overdue by the test clock: derived, the timer fires receivable.overdue, ageing buckets at 10/45/75/120 days', async (t) => {
  const T = await a.newTenant('Ageing SA');
  const clock = (await a.call('GET', '/v1/test/clock', { key: T.testKey })).body;
  const now = Date.parse(clock.now);
  const email = 'cobranza@ageing.mx';
  const r = (await create(base({ customer_email: email, customer_name: 'Ageing SA', amount_minor: 10_000, due_date: new Date(now + 3600_000).toISOString() }), T.testKey)).body;
  const later = (await create(base({ customer_email: email, amount_minor: 999, due_date: new Date(now + 400 * DAY * 1000).toISOString() }), T.testKey)).body;
  t.equal(r.status, 'open');
  const ageing = async () => (await a.call('GET', '/v1/receivables/ageing', { key: T.testKey })).body;
  t.same((await ageing()).data, [], 'nothing is past due yet');
  const advance = (seconds: number) => a.call('POST', '/v1/test/clock/advance', { key: T.testKey, body: { seconds } });
  const expectBucket = async (label: string, bucket: string) => {
    const g = await ageing();
    t.equal(g.data.length, 1, `${label}: one row`);
    const row = g.data[0];
    t.match(row, { customer_email: email, customer_name: 'Ageing SA', currency: 'MXN', total_minor: 10_000 }, label);
    for (const b of ['bucket0_to30_minor', 'bucket31_to60_minor', 'bucket61_to90_minor', 'bucket90_plus_minor']) t.equal(row[b], b === bucket ? 10_000 : 0, `${label}: ${b}`);
  };
  // due in 1 h; +10 days (and the hour): 10 days past due
  await advance(3600 + 10 * DAY);
  t.equal((await get(r.id, T.testKey)).body.status, 'overdue', 'overdue by the clock at once');
  const ev = await until(() => a.app.deps.sql`select event_type, data from outbox_events where entity_id = ${r.id}`, (rows) => rows.length > 0);
  t.same(ev.map((e) => e.event_type), ['receivable.overdue'], 'the timer fired receivable.overdue');
  t.equal(ev[0].data.status, 'overdue');
  const [row] = await a.app.deps.sql`select status from receivables where id = ${r.id}`;
  t.equal(row.status, 'overdue', 'the stored state moved too');
  t.equal((await get(later.id, T.testKey)).body.status, 'open', 'one not yet due stays open');
  await expectBucket('10 days', 'bucket0_to30_minor');
  await advance(35 * DAY);
  await expectBucket('45 days', 'bucket31_to60_minor');
  await advance(30 * DAY);
  await expectBucket('75 days', 'bucket61_to90_minor');
  await advance(45 * DAY);
  await expectBucket('120 days', 'bucket90_plus_minor');
  const list = await a.call('GET', '/v1/receivables?status=overdue', { key: T.testKey });
  t.same(list.body.data.map((x: any) => x.id), [r.id], 'list filter by derived status');
  const st = (await a.call('GET', `/v1/receivables/statement?customer_email=${email}`, { key: T.testKey })).body;
  t.match(st, { total_overdue_minor: 10_000, total_open_minor: 999, total_paid_minor: 0 });
  // paid while overdue: leaves the ageing
  await payWithSpei(a, T.id, T.testKey, r.payment_link_url);
  await until(() => get(r.id, T.testKey), (x) => x.body.status === 'paid');
  t.same((await ageing()).data, [], 'a paid receivable is not aged');
  const evs = await a.app.deps.sql`select event_type from outbox_events where entity_id = ${r.id} order by id`;
  t.same(evs.map((e) => e.event_type), ['receivable.overdue', 'receivable.paid']);
});

t.test('cancel: the link takes no more payments; idempotent; a paid one cannot be canceled', async (t) => {
  const r = (await create(base())).body;
  // the payer opened the page and chose SPEI (a CLABE is waiting)
  const slug = r.payment_link_url.split('/').pop();
  const opened = (await a.call('POST', `/public/payment_links/${slug}/intent`, {})).body;
  await a.call('POST', `/public/payment_intents/${opened.id}/confirm`, { body: { client_secret: opened.client_secret, payment_token: 'spei', payment_method: 'spei' } });
  await until(() => a.call('GET', `/v1/payment_intents/${opened.id}`, { key: ten.testKey }), (x) => x.body.status === 'requires_action');
  const c = await a.call('POST', `/v1/receivables/${r.id}/cancel`, { key: ten.testKey });
  t.equal(c.status, 200, c.text);
  t.match(c.body, { id: r.id, status: 'canceled' });
  t.ok(c.body.canceled_at);
  t.equal((await a.call('GET', `/v1/payment_intents/${opened.id}`, { key: ten.testKey })).body.status, 'canceled', 'the open intent was canceled');
  const link = (await a.call('GET', `/v1/payment_links/${r.payment_link_id}`, { key: ten.testKey })).body;
  t.equal(link.active, false);
  const page = await a.call('GET', r.payment_link_url);
  t.match(page.text, /data-testid="link-inactive"/, 'the page says the link is no longer active');
  t.equal((await a.call('POST', `/public/payment_links/${slug}/intent`, {})).status, 404, 'no new intent');
  const again = await a.call('POST', `/v1/receivables/${r.id}/cancel`, { key: ten.testKey });
  t.equal(again.status, 200);
  t.equal(again.body.status, 'canceled', 'canceling again answers it unchanged');
  const ev = await a.app.deps.sql`select event_type from outbox_events where entity_id = ${r.id}`;
  t.same(ev.map((e) => e.event_type), ['receivable.canceled'], 'one event');

  // An intent of the link opened before the cancel (a page left open) cannot be confirmed after it.
  const r2 = (await create(base())).body;
  const o2 = (await a.call('POST', `/public/payment_links/${r2.payment_link_url.split('/').pop()}/intent`, {})).body;
  await a.app.deps.sql`update payment_links set active = false where id = ${r2.payment_link_id}`;
  const late = await a.call('POST', `/public/payment_intents/${o2.id}/confirm`, { body: { client_secret: o2.client_secret, payment_token: 'tok_sim_ok', payment_method: 'card' } });
  t.equal(late.body.error.code, 'payment_intent.not_confirmable', 'an inactive link takes no payment from an open page');

  const p = (await create(base())).body;
  await payWithCard(a, p.payment_link_url);
  await until(() => get(p.id), (x) => x.body.status === 'paid');
  const nope = await a.call('POST', `/v1/receivables/${p.id}/cancel`, { key: ten.testKey });
  t.equal(nope.status, 409);
  t.equal(nope.body.error.code, 'receivable.cancel_conflict');
  t.equal((await a.call('POST', `/v1/receivables/${crypto.randomUUID()}/cancel`, { key: ten.testKey })).body.error.code, 'receivable.not_found');
  t.equal((await a.call('GET', '/v1/receivables?status=canceled', { key: ten.testKey })).body.data.some((x: any) => x.id === r.id), true, 'list filter canceled');
});

t.test('cancel while a card payment is processing is refused; a payment that lands after a cancel is recorded, status unchanged', async (t) => {
  const r = (await create(base())).body;
  const slug = r.payment_link_url.split('/').pop();
  const o = (await a.call('POST', `/public/payment_links/${slug}/intent`, {})).body;
  // tok_sim_slow: the provider answers about 2 s later; the intent is processing meanwhile (or already paid: refused either way)
  await a.call('POST', `/public/payment_intents/${o.id}/confirm`, { body: { client_secret: o.client_secret, payment_token: 'tok_sim_slow', payment_method: 'card' } });
  const c = await a.call('POST', `/v1/receivables/${r.id}/cancel`, { key: ten.testKey });
  t.equal(c.status, 409);
  t.equal(c.body.error.code, 'receivable.cancel_conflict', c.body.error.message);
  const paid = await until(() => get(r.id), (x) => x.body.status === 'paid', 15_000);
  t.equal(paid.body.status, 'paid', 'the payment went through');

  const late = (await create(base())).body;
  await a.app.deps.sql`update receivables set status = 'canceled', canceled_at = now(), version = version + 1 where id = ${late.id}`; // canceled while the payment was in flight
  const pi = await payWithCard(a, late.payment_link_url);
  await until(() => a.call('GET', `/v1/payment_intents/${pi}`, { key: ten.testKey }), (x) => x.body.status === 'succeeded');
  const after = await get(late.id);
  t.equal(after.body.status, 'canceled', 'stays canceled');
  const h = await a.app.deps.sql`select event, data from entity_history where entity_id = ${late.id} and event = 'payment_after_cancel'`;
  t.equal(h.length, 1, 'the payment is on record');
  t.equal(h[0].data.payment_intent_id, pi);
  t.equal((await a.app.deps.sql`select 1 from outbox_events where entity_id = ${late.id}`).length, 0, 'no receivable event');
});

t.test('list: filters, cursor pagination, corrupt cursor', async (t) => {
  const T = await a.newTenant('Listas');
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) {
    const email = i % 2 ? 'impar@x.mx' : 'par@x.mx';
    ids.push((await create(base({ customer_email: email, amount_minor: 100 + i, due_date: new Date(Date.now() + (i + 1) * DAY * 1000).toISOString() }), T.testKey)).body.id);
  }
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const r = await a.call('GET', `/v1/receivables?limit=3${cursor ? `&cursor=${cursor}` : ''}`, { key: T.testKey });
    t.equal(r.status, 200, `page ${pages + 1}`);
    seen.push(...r.body.data.map((x: any) => x.id));
    cursor = r.body.has_more ? r.body.next_cursor : undefined;
    if (!r.body.has_more) t.notOk('next_cursor' in r.body, 'no next_cursor on the last page');
    pages++;
  } while (cursor && pages < 10);
  t.equal(pages, 3);
  t.same(seen, [...ids].reverse(), 'every receivable once, newest first');
  const par = await a.call('GET', '/v1/receivables?customer_email=PAR@x.mx&limit=100', { key: T.testKey });
  t.equal(par.body.data.length, 4);
  const due = await a.call('GET', `/v1/receivables?due_from=${encodeURIComponent(new Date(Date.now() + 2.5 * DAY * 1000).toISOString())}&due_to=${encodeURIComponent(new Date(Date.now() + 5.5 * DAY * 1000).toISOString())}`, { key: T.testKey });
  t.same(due.body.data.map((x: any) => x.amount_minor).sort(), [102, 103, 104], 'due range (half-open)');
  t.equal((await a.call('GET', '/v1/receivables?status=open&limit=100', { key: T.testKey })).body.data.length, 7);
  // Past due by the clock while its timer has not fired yet (stored 'open'): listed as overdue already.
  await a.app.deps.sql`update receivables set due_date = now() - interval '1 day' where id = ${ids[2]}`;
  t.same((await a.call('GET', '/v1/receivables?status=overdue', { key: T.testKey })).body.data.map((x: any) => x.id), [ids[2]], 'overdue by the clock before the timer');
  t.equal((await a.call('GET', '/v1/receivables?status=open&limit=100', { key: T.testKey })).body.data.length, 6);
  t.equal((await get(ids[2], T.testKey)).body.status, 'overdue');
  const first = await a.call('GET', '/v1/receivables?limit=2', { key: T.testKey });
  // Changed in its last character, two ways: a data bit, and only the spare bits base64url decoding
  // ignores (the test once changed 'AA' to 'AB' when the cursor ended so, the spare-bits case, and
  // the cursor was accepted: a failure one run in 256).
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const cur: string = first.body.next_cursor;
  const last = B64.indexOf(cur.at(-1)!);
  for (const bad of [cur.slice(0, -1) + B64[last ^ 16], cur.slice(0, -1) + B64[last ^ 1]]) {
    t.equal((await a.call('GET', `/v1/receivables?cursor=${bad}`, { key: T.testKey })).body.error?.code, 'reports.invalid_cursor', `cursor ending ${bad.slice(-2)} for ${cur.slice(-2)}`);
  }
  t.equal((await a.call('GET', `/v1/receivables?cursor=${first.body.next_cursor}`, { key: ten.testKey })).body.error.code, 'reports.invalid_cursor', "another tenant's cursor");
  t.equal((await a.call('GET', '/v1/receivables?status=late', { key: T.testKey })).status, 400);
  t.same((await a.call('GET', '/v1/receivables', { key: T.liveKey })).body.data, [], 'live mode sees none of the test receivables');
  t.equal((await a.call('POST', `/v1/receivables/${ids[0]}/cancel`, { key: ten.testKey })).body.error.code, 'receivable.not_found', 'another tenant cannot cancel');
  t.equal((await a.call('POST', `/v1/receivables/${ids[0]}/whatsapp_link`, { key: T.liveKey })).body.error.code, 'receivable.not_found', 'another mode: not found');
  t.equal((await a.call('GET', '/v1/receivables/statement?customer_email=par@x.mx', { key: ten.testKey })).body.receivables.length, 0, "another tenant's statement is its own");
});

t.test('WhatsApp link: international number, Spanish message with amount, concepto, due date and absolute link; no_phone', async (t) => {
  const r = (await create(base({ customer_phone: '(55) 1234-5678', due_date: '2026-12-15', amount_minor: 125_050 }))).body;
  const w = await a.call('POST', `/v1/receivables/${r.id}/whatsapp_link`, { key: ten.testKey });
  t.equal(w.status, 200, 'whatsapp link');
  t.same(Object.keys(w.body), ['url']);
  const u = new URL(w.body.url);
  t.equal(u.origin, 'https://wa.me');
  t.equal(u.pathname, '/525512345678', 'international form, no +');
  const text = u.searchParams.get('text')!;
  t.match(text, /\$1,250\.50 MXN/, 'the amount');
  t.match(text, /Factura de tornillería noviembre/, 'the concepto');
  t.match(text, /15\/12\/2026/, 'the due date (Mexico City)');
  t.ok(text.includes(`${a.config.publicBaseUrl}${r.payment_link_url}`), 'the absolute payment-link URL');
  t.match(text, /^Hola Ferretería Don Pepe/);
  const old = (await create(base({ customer_phone: '+52 1 55 1234 5678' }))).body;
  t.equal(new URL((await a.call('POST', `/v1/receivables/${old.id}/whatsapp_link`, { key: ten.testKey })).body.url).pathname, '/525512345678', 'the old mobile 1 is dropped');
  const none = (await create(base())).body;
  const np = await a.call('POST', `/v1/receivables/${none.id}/whatsapp_link`, { key: ten.testKey });
  t.equal(np.status, 400);
  t.equal(np.body.error.code, 'receivable.no_phone');
  t.equal((await a.call('POST', `/v1/receivables/${crypto.randomUUID()}/whatsapp_link`, { key: ten.testKey })).body.error.code, 'receivable.not_found');
});

t.test('fiscal fields without a fiscal profile: paid, nothing is invoiced', async (t) => {
  const r = (await create(base({ customer_name: 'Escuela Kemper Urgate', customer_rfc: 'eku9003173c9', customer_uso_cfdi: 'G03', customer_regimen_fiscal: '601', customer_cp: '26015' }))).body;
  t.equal(r.customer_rfc, 'EKU9003173C9', 'the RFC is normalized');
  const pi = await payWithCard(a, r.payment_link_url);
  const paid = await until(() => get(r.id), (x) => x.body.status === 'paid');
  t.equal(paid.body.invoice_status, 'none');
  t.equal((await a.app.deps.sql`select 1 from invoices where payment_intent_id = ${pi}`).length, 0);
});

t.test('OpenAPI documents the routes and the receivable events', async (t) => {
  const o = (await a.call('GET', '/openapi/v1.json')).body;
  for (const p of ['/v1/receivables', '/v1/receivables/{id}', '/v1/receivables/{id}/cancel', '/v1/receivables/{id}/whatsapp_link', '/v1/receivables/statement', '/v1/receivables/ageing']) t.ok(o.paths[p], p);
  for (const e of ['receivable.paid', 'receivable.overdue', 'receivable.canceled']) t.ok(JSON.stringify(o.webhooks ?? {}).includes(e), `webhook ${e}`);
});
