// The `sim` recharge aggregator (decisions.md §5): carriers telcel, movistar, att, bait; products
// `<carrier>_<pesos>` (airtime, commission 5%); ours besides: `<carrier>_data_<pesos>` data
// packages, an inactive product `movistar_500` and an inactive carrier `virgin` (to exercise the
// "unknown or inactive" codes). A phone ending in 0000 is rejected (failed); one ending in 1111
// is delivered but the answer is lost (OutcomeUnknown): asked later, it says delivered; one
// ending in 2222 is delivered at once and answered about 2 s later (a slow network: the window a
// crash test kills a process in). Its
// book of orders is a table (sim_recharge_orders): a repeated key delivers nothing again, and
// `sends` / `status_queries` let tests prove a delivery ran once.
//
// Bag report: every day has a SPEI deposit of 1,000.00 registered at 09:00, one sale movement per
// delivered order of that day, and a 500.00 "late" deposit registered at 23:50 that the report of
// that day lists only once the day is over (first seen in "yesterday's" report).
import { createHash, randomBytes } from 'node:crypto';
import type { Sql } from '../../kernel/db.js';
import { reportDay, type BagAccount, type BagMovement, type CarrierInfo, type ProductInfo, type RechargeAggregator, type RechargeOrder, type RechargeState } from './aggregator.js';
import { OutcomeUnknown } from '../../kernel/outbound.js';

export const SIM_CARRIERS: readonly CarrierInfo[] = [
  { code: 'telcel', name: 'Telcel', active: true },
  { code: 'movistar', name: 'Movistar', active: true },
  { code: 'att', name: 'AT&T', active: true },
  { code: 'bait', name: 'Bait', active: true },
  { code: 'virgin', name: 'Virgin Mobile', active: false },
];

const AIRTIME_PESOS = [20, 30, 50, 100, 150, 200, 300, 500];
const DATA_PESOS = [50, 100, 200];

export const SIM_PRODUCTS: readonly ProductInfo[] = SIM_CARRIERS.flatMap((c) => [
  ...AIRTIME_PESOS.map((p) => ({
    code: `${c.code}_${p}`, carrier_code: c.code, kind: 'airtime' as const, name: `${c.name} tiempo aire $${p}`,
    face_amount_minor: p * 100, merchant_commission_minor: p * 5, currency: 'MXN', active: c.active && `${c.code}_${p}` !== 'movistar_500',
  })),
  ...DATA_PESOS.map((p) => ({
    code: `${c.code}_data_${p}`, carrier_code: c.code, kind: 'data' as const, name: `${c.name} paquete de datos $${p}`,
    face_amount_minor: p * 100, merchant_commission_minor: p * 5, currency: 'MXN', active: c.active,
  })),
]);

export const SIM_RECHARGE_FAILURE = 'The carrier rejected the number (simulated: phone ending in 0000).';
export const SIM_DEPOSIT_MINOR = 100_000;
export const SIM_LATE_DEPOSIT_MINOR = 50_000;
export const SIM_BAG_START_MINOR = 500_000;

const mask = (phone: string) => `${phone.slice(0, 2)}****${phone.slice(-4)}`;
const stateOf = (r: Record<string, unknown>): RechargeState =>
  r.state === 'delivered' ? { state: 'delivered', providerRef: r.provider_ref as string } : { state: 'failed', providerRef: r.provider_ref as string, reason: r.failure_reason as string };
const folio = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 12).toUpperCase();
const pesos = (minor: number) => `${Math.trunc(minor / 100)}.${String(Math.abs(minor) % 100).padStart(2, '0')}`;

export const SIM_SLOW_MS = 2000;

export class SimRechargeAggregator implements RechargeAggregator {
  readonly key = 'sim';
  constructor(
    private sql: Sql,
    private clock: () => Date = () => new Date(),
    private sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  carriers() {
    return SIM_CARRIERS;
  }

  products() {
    return SIM_PRODUCTS;
  }

  async send(o: RechargeOrder): Promise<RechargeState> {
    const failed = o.phone.endsWith('0000');
    const [r] = await this.sql`
      insert into sim_recharge_orders (key, tenant_id, livemode, carrier_code, product_code, phone_masked, amount_minor, state, provider_ref, failure_reason)
      values (${o.key}, ${o.tenantId}, ${o.livemode}, ${o.carrierCode}, ${o.productCode}, ${mask(o.phone)}, ${o.amountMinor},
              ${failed ? 'failed' : 'delivered'}, ${`sim_rc_${randomBytes(8).toString('hex')}`}, ${failed ? SIM_RECHARGE_FAILURE : null})
      on conflict (key, tenant_id) do update set sends = sim_recharge_orders.sends + 1
      returning *, (xmax = 0) as inserted`;
    if (r.inserted && o.phone.endsWith('2222')) await this.sleep(SIM_SLOW_MS);
    // Delivered, but the answer never reaches us (a network timeout).
    if (o.phone.endsWith('1111')) throw new OutcomeUnknown('unreachable', 'The aggregator did not answer within the timeout (simulated: phone ending in 1111).');
    return stateOf(r);
  }

  async status(key: string): Promise<RechargeState | null> {
    const rows = await this.sql`update sim_recharge_orders set status_queries = status_queries + 1 where key = ${key} returning *`;
    return rows.length ? stateOf(rows[0]) : null;
  }

  async movements(a: BagAccount, day: string): Promise<BagMovement[]> {
    const pouch = { pouchId: `bolsa-${a.tenantId.slice(0, 8)}`, pouchName: 'Bolsa tiempo aire' };
    const sourceId = `sim-report:${day}`;
    const start = new Date(`${day}T06:00:00Z`); // 00:00 in Mexico City
    const out: BagMovement[] = [];
    const deposit = (id: string, at: Date, minor: number, via: string): BagMovement => ({
      sourceId, movementId: id, registeredAt: at, ...pouch, movementType: 'deposito', isDeposit: true, amountMinor: minor, currency: 'MXN',
      rawAmount: pesos(minor), units: null, additionalFolio: folio(`${a.tenantId}:${id}`), status: 'aplicado', via,
    });
    const first = new Date(start.getTime() + 9 * 3600_000);
    if (first <= this.clock()) out.push(deposit(`dep-${day}-0900`, first, SIM_DEPOSIT_MINOR, 'spei'));
    const sales = await this.sql`
      select key, product_code, amount_minor, provider_ref, created_at from sim_recharge_orders
       where tenant_id = ${a.tenantId} and livemode = ${a.livemode} and state = 'delivered'
         and created_at >= ${start} and created_at < ${new Date(start.getTime() + 86_400_000)} order by created_at, key`;
    for (const s of sales) {
      out.push({
        sourceId, movementId: `sale-${s.provider_ref as string}`, registeredAt: s.created_at as Date, ...pouch, movementType: 'venta', isDeposit: false,
        amountMinor: -Number(s.amount_minor), currency: 'MXN', rawAmount: `-${pesos(Number(s.amount_minor))}`, units: 1, additionalFolio: s.product_code as string, status: 'aplicado', via: 'api',
      });
    }
    // Reported late: listed only once its day is over.
    if (reportDay(this.clock()) > day) out.push(deposit(`dep-${day}-late`, new Date(start.getTime() + 86_400_000 - 600_000), SIM_LATE_DEPOSIT_MINOR, 'ventanilla'));
    return out;
  }

  async balance(a: BagAccount) {
    const [r] = await this.sql`
      select coalesce(sum(amount_minor), 0)::bigint as sold from sim_recharge_orders where tenant_id = ${a.tenantId} and livemode = ${a.livemode} and state = 'delivered'`;
    return { balanceMinor: SIM_BAG_START_MINOR - Number(r.sold), currency: 'MXN' };
  }
}
