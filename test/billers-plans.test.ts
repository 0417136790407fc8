// The pure parts of billers and recharges, without a database: the plans of a recharge and a
// service payment (state, ledger lines, history), the reference formats, the phone mask, the
// derived deposit event id, and the sim's catalog.
import t from 'tap';
import { planRecharge, maskPhone, depositEventId, rechargeDeliveredLines, type RechargeRow } from '../actors/recharges.js';
import { planServicePayment, type ServicePaymentRow } from '../actors/billers.js';
import { billerByCode, luhnValid, referenceProblem } from '../connectors/billers/catalog.js';
import { simInquiry } from '../connectors/billers/sim.js';
import { SIM_PRODUCTS } from '../connectors/recharge/sim.js';
import { reportDay } from '../connectors/recharge/aggregator.js';
import { assertBalanced } from '../kernel/ledger.js';

const at = new Date('2026-11-26T12:00:00Z');
const env = { at, now: at, newId: () => '00000000-0000-4000-8000-000000000000' };
const recharge = (over: Partial<RechargeRow> = {}): RechargeRow => ({
  id: '11111111-1111-4111-8111-111111111111', tenant_id: '22222222-2222-4222-8222-222222222222', livemode: false, status: 'pending', version: 3,
  carrier_code: 'telcel', product_code: 'telcel_50', phone_sealed: 'v1.x', phone_masked: '55****5678', face_amount_minor: 5000, merchant_commission_minor: 250,
  currency: 'MXN', payment_intent_id: null, order_key: 'rc_1', send_started_at: at, provider_ref: null, failure_reason: null,
  created_at: at, updated_at: at, ...over,
});

t.test('recharge plan: delivered books the spec entry with frozen amounts; failed books nothing; done is a no-op', async (t) => {
  const h = { row: recharge(), clockOffsetMs: 0 };
  const d = planRecharge(h, { kind: 'aggregator', state: { state: 'delivered', providerRef: 'p1' } }, env);
  t.match(d.set, { status: 'delivered', provider_ref: 'p1' });
  t.equal(d.ledger!.length, 1);
  t.same(d.ledger![0].lines, [
    { account: 'recharge_clearing', currency: 'MXN', amountMinor: 5000 },
    { account: 'recharge_payable:telcel', currency: 'MXN', amountMinor: -4750 },
    { account: 'merchant_recharge_income', currency: 'MXN', amountMinor: -250 },
  ]);
  assertBalanced(d.ledger![0].lines);
  t.notMatch(JSON.stringify(d), /5512345678/);
  const f = planRecharge(h, { kind: 'aggregator', state: { state: 'failed', providerRef: 'p2', reason: 'no' } }, env);
  t.match(f.set, { status: 'failed', failure_reason: 'no' });
  t.same(f.ledger, []);
  const s = planRecharge({ row: recharge({ send_started_at: null }), clockOffsetMs: 0 }, { kind: 'send_started' }, env);
  t.same(s.set, { updated_at: at, send_started_at: at }, 'send_started stays pending');
  const done = planRecharge({ row: recharge({ status: 'delivered' }), clockOffsetMs: 0 }, { kind: 'aggregator', state: { state: 'delivered', providerRef: 'p1' } }, env);
  t.notOk(done.set, 'evidence about a delivered recharge changes nothing');
  t.notOk(done.ledger?.length, 'and books nothing again');
  for (const p of SIM_PRODUCTS) assertBalanced(rechargeDeliveredLines(p.carrier_code, p.currency, p.face_amount_minor, p.merchant_commission_minor));
});

t.test('service payment plan: paid books clearing against the biller; failed nothing', async (t) => {
  const row: ServicePaymentRow = {
    id: '33333333-3333-4333-8333-333333333333', tenant_id: '22222222-2222-4222-8222-222222222222', livemode: false, status: 'pending', version: 1,
    biller_code: 'cfe', reference: '123456789012', amount_minor: 45_600, currency: 'MXN', payment_intent_id: null, send_started_at: at,
    provider_ref: null, failure_reason: null, created_at: at, updated_at: at,
  };
  const p = planServicePayment({ row, clockOffsetMs: 0 }, { kind: 'biller', state: { state: 'paid', providerRef: 'b1' } }, env);
  t.match(p.set, { status: 'paid', provider_ref: 'b1' });
  t.same(p.ledger![0].lines, [
    { account: 'service_payment_clearing', currency: 'MXN', amountMinor: 45_600 },
    { account: 'biller_payable:cfe', currency: 'MXN', amountMinor: -45_600 },
  ]);
  const f = planServicePayment({ row, clockOffsetMs: 0 }, { kind: 'biller', state: { state: 'failed', providerRef: 'b2', reason: 'r' } }, env);
  t.match(f.set, { status: 'failed', failure_reason: 'r' });
  t.same(f.ledger, []);
  t.notOk(planServicePayment({ row: { ...row, status: 'paid' }, clockOffsetMs: 0 }, { kind: 'biller', state: { state: 'paid', providerRef: 'b1' } }, env).set);
});

t.test('references, mask, event ids, report days', async (t) => {
  t.ok(luhnValid('4111111111111111'));
  t.notOk(luhnValid('4111111111111112'));
  t.equal(referenceProblem(billerByCode('cfe')!, '123456789012'), undefined);
  t.match(referenceProblem(billerByCode('cfe')!, '1234'), /12 digits/);
  t.match(referenceProblem(billerByCode('izzi')!, '12345678901'), /8 to 10 digits/);
  // decisions §5: agua_cdmx is 16 digits, with no check digit (the Luhn check refused valid accounts).
  t.equal(referenceProblem(billerByCode('agua_cdmx')!, '4111111111111112'), undefined, 'agua_cdmx: any 16 digits');
  t.match(referenceProblem(billerByCode('agua_cdmx')!, '411111111111111'), /16 digits/);
  t.match(referenceProblem({ ...billerByCode('agua_cdmx')!, checkDigit: 'luhn' }, '4111111111111112'), /check digit/, 'a declared check digit is still checked');
  t.equal(simInquiry('cfe', '000000000000'), null, 'all zeros: unknown');
  t.same(simInquiry('cfe', '123456789012', at), simInquiry('cfe', '123456789012', at), 'deterministic');
  t.equal(maskPhone('5512345678'), '55****5678');
  const a = { tenantId: '22222222-2222-4222-8222-222222222222', livemode: false };
  const id = depositEventId(a, 'sim', 'dep-2026-11-25-0900');
  t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  t.equal(depositEventId(a, 'sim', 'dep-2026-11-25-0900'), id, 'same movement, same id');
  t.not(depositEventId({ ...a, livemode: true }, 'sim', 'dep-2026-11-25-0900'), id);
  t.not(depositEventId(a, 'sim', 'dep-2026-11-25-late'), id);
  t.equal(reportDay(new Date('2026-11-26T05:59:00Z')), '2026-11-25', 'Mexico City day');
  t.equal(reportDay(new Date('2026-11-26T06:00:00Z')), '2026-11-26');
  t.ok(SIM_PRODUCTS.some((p) => p.code === 'telcel_50' && p.face_amount_minor === 5000 && p.merchant_commission_minor === 250));
});
