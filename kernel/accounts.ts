// The chart of accounts: every ledger account Orquesta posts to, with its typed name and, beside
// it, the SAT código agrupador default (Anexo 24 RMF) that fits its nature. Code builds account
// names only through `accounts` below (no string literals elsewhere: issue 24.4); the pólizas'
// default mapping (formats/polizas/codigo-agrupador.ts) is read from this chart.
//
// The books are the merchant's (tenant's) own, never the orchestrator's, which holds no funds.
// A tenant maps its own catalog codes over the defaults (PUT /v1/reports/account_mapping); an
// account without a default here falls back to 107.05 (docs/reports.md "Default account mapping").

/** Accounts with one name. */
export type FixedAccount =
  | 'sales'
  | 'tips_payable'
  | 'refunds'
  | 'disputed_funds'
  | 'recharge_clearing'
  | 'merchant_recharge_income'
  | 'service_payment_clearing'
  | 'platform_fee_income'
  | 'payouts';

/** Accounts kept per counterparty: `<prefix>:<connector, bank, carrier, biller or connect account>`. */
export type AccountPrefix = 'connector_receivable' | 'connector_fees' | 'bank' | 'recharge_payable' | 'biller_payable' | 'connect_payable' | 'payout_source';

/** A ledger account name. */
export type Account = FixedAccount | `${AccountPrefix}:${string}`;

export interface ChartEntry {
  /** The account, or `prefix:*` for every account of that prefix. */
  pattern: FixedAccount | `${AccountPrefix}:*`;
  /** What it holds (docs). */
  meaning: string;
  /** The SAT código agrupador default and the name used as the movement concept (ASCII); none: the fallback. */
  agrupador?: { code: string; name: string };
}

/** The chart, in the order the account-mapping answer lists its defaults. */
export const CHART: readonly ChartEntry[] = [
  // What the acquirer/PSP owes on captured charges (funds in transit): 107.05 Otros deudores diversos.
  { pattern: 'connector_receivable:*', meaning: 'what a connector owes on captured charges, less fees, refunds and disputes', agrupador: { code: '107.05', name: 'Por cobrar al procesador' } },
  // A bank account of the tenant (bank reconciliation: a matched statement line moves the charge here).
  { pattern: 'bank:*', meaning: 'a bank account of the tenant (bank reconciliation)', agrupador: { code: '102.01', name: 'Bancos nacionales' } },
  // Funds withheld by the acquirer while a dispute is open: also a receivable.
  { pattern: 'disputed_funds', meaning: 'funds withheld by the acquirer while a dispute is open', agrupador: { code: '107.05', name: 'Fondos retenidos por contracargo' } },
  { pattern: 'sales', meaning: 'sales, credited at capture', agrupador: { code: '401.01', name: 'Ventas y/o servicios gravados a la tasa general' } },
  // Tips collected for staff: owed to them, 205.06 Otros acreedores diversos a corto plazo.
  { pattern: 'tips_payable', meaning: 'tips collected for staff', agrupador: { code: '205.06', name: 'Propinas por pagar al personal' } },
  // Card-processing fees: 601.75 Comisiones por tarjetas de credito (701.10 Comisiones bancarias is the alternative).
  { pattern: 'connector_fees:*', meaning: "a connector's processing fees", agrupador: { code: '601.75', name: 'Comisiones del procesador' } },
  { pattern: 'refunds', meaning: 'refunds of sales', agrupador: { code: '402.01', name: 'Devoluciones sobre ventas' } },
  // Recharges (spec: recharge ledger entry).
  { pattern: 'recharge_clearing', meaning: 'face value of delivered recharges', agrupador: { code: '107.05', name: 'Recargas por cobrar' } },
  { pattern: 'recharge_payable:*', meaning: 'what is owed to a carrier for its recharges', agrupador: { code: '201.01', name: 'Proveedores de recargas' } },
  { pattern: 'merchant_recharge_income', meaning: "the merchant's commission on recharges", agrupador: { code: '401.29', name: 'Ingresos por comisiones de recargas' } },
  // Without a default code yet (they fall back to 107.05; docs/reports.md).
  { pattern: 'service_payment_clearing', meaning: 'bills paid for customers' },
  { pattern: 'biller_payable:*', meaning: 'what is owed to a biller for paid bills' },
  { pattern: 'platform_fee_income', meaning: "the platform's application fee on a split charge (Connect)" },
  { pattern: 'connect_payable:*', meaning: 'what the platform owes a sub-merchant until it is paid out' },
  { pattern: 'payouts', meaning: 'money sent to a beneficiary by a plain payout (no split)' },
  { pattern: 'payout_source:*', meaning: "the merchant's own account at a payout rail: payouts leave from it, returns come back to it" },
];

const per =
  <P extends AccountPrefix>(prefix: P) =>
  (key: string): `${P}:${string}` =>
    `${prefix}:${key}`;

/** Account names, typed: `accounts.sales`, `accounts.connectorReceivable('sim')`. */
export const accounts = {
  sales: 'sales',
  tipsPayable: 'tips_payable',
  refunds: 'refunds',
  disputedFunds: 'disputed_funds',
  rechargeClearing: 'recharge_clearing',
  merchantRechargeIncome: 'merchant_recharge_income',
  servicePaymentClearing: 'service_payment_clearing',
  platformFeeIncome: 'platform_fee_income',
  payouts: 'payouts',
  connectorReceivable: per('connector_receivable'),
  connectorFees: per('connector_fees'),
  bank: per('bank'),
  rechargePayable: per('recharge_payable'),
  billerPayable: per('biller_payable'),
  connectPayable: per('connect_payable'),
  payoutSource: per('payout_source'),
} as const satisfies Record<string, FixedAccount | ((key: string) => Account)>;

/** `<prefix>:`, for SQL that selects every account of a prefix (`account >= 'p:' and account < 'p;'`, or `like`). */
export const prefixOf = (prefix: AccountPrefix) => `${prefix}:`;
