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
  | 'payouts'
  // Issue 27: the books mirror the CFDI (docs/reports.md "IVA in the books") and the bank statement.
  | 'sales_iva_0'
  | 'sales_exento'
  | 'iva_trasladado_cobrado'
  | 'iva_trasladado_no_cobrado'
  | 'iva_acreditable'
  | 'clientes'
  | 'isr_retenido_por_clientes'
  | 'iva_retenido_por_clientes'
  | 'discounts'
  | 'customer_credits'
  | 'bank_suspense';

/** Accounts kept per counterparty: `<prefix>:<connector, bank, carrier, biller or connect account>`. */
export type AccountPrefix = 'connector_receivable' | 'connector_fees' | 'connector_fees_payable' | 'bank' | 'recharge_payable' | 'biller_payable' | 'connect_payable' | 'payout_source';

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
  // Issue 27: the sale by IVA treatment (401.04 gravados al 0 %, 401.07 exentos; 8 %, the región
  // fronteriza's stimulus on the general rate, stays in 401.01), IVA (LIVA art. 1-B: due when collected):
  // trasladado cobrado 208.01, no cobrado 209.01 (a PPD invoice until its REP), acreditable pagado 118.01
  // (the connector fee's IVA); what customers owe on PPD invoices 105.01; taxes customers withheld
  // (RESICO's ISR, IVA) 113.08; credit notes 402.02; owed back on a paid invoice 205.06.
  { pattern: 'sales_iva_0', meaning: 'sales taxed at IVA 0 %', agrupador: { code: '401.04', name: 'Ventas y/o servicios gravados al 0%' } },
  { pattern: 'sales_exento', meaning: 'sales exempt from IVA, or not objeto de impuesto', agrupador: { code: '401.07', name: 'Ventas y/o servicios exentos' } },
  { pattern: 'iva_trasladado_cobrado', meaning: 'IVA charged and collected (card/transfer captures, REPs)', agrupador: { code: '208.01', name: 'IVA trasladado cobrado' } },
  { pattern: 'iva_trasladado_no_cobrado', meaning: 'IVA of PPD invoices not collected yet', agrupador: { code: '209.01', name: 'IVA trasladado no cobrado' } },
  { pattern: 'iva_acreditable', meaning: 'IVA paid on connector fees', agrupador: { code: '118.01', name: 'IVA acreditable pagado' } },
  { pattern: 'clientes', meaning: 'what customers owe on PPD invoices', agrupador: { code: '105.01', name: 'Clientes nacionales' } },
  { pattern: 'isr_retenido_por_clientes', meaning: 'ISR withheld by customers (RESICO 1.25 %, honorarios)', agrupador: { code: '113.08', name: 'ISR retenido por clientes' } },
  { pattern: 'iva_retenido_por_clientes', meaning: 'IVA withheld by customers', agrupador: { code: '113.08', name: 'IVA retenido por clientes' } },
  { pattern: 'discounts', meaning: 'credit notes (descuentos y bonificaciones)', agrupador: { code: '402.02', name: 'Descuentos y bonificaciones sobre ventas' } },
  { pattern: 'customer_credits', meaning: 'owed back to customers by credit notes of paid invoices', agrupador: { code: '205.06', name: 'Saldos a favor de clientes' } },
  // Bank side (issue 27): money in or out of the bank not identified yet, and the fee the bank did not net from a SPEI deposit.
  { pattern: 'bank_suspense', meaning: 'bank movements not identified yet (unmatched deposits, debits)', agrupador: { code: '107.05', name: 'Partidas bancarias por identificar' } },
  { pattern: 'connector_fees_payable:*', meaning: "a connector's fees the bank did not net, owed to it", agrupador: { code: '205.06', name: 'Comisiones por pagar al procesador' } },
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
  salesIva0: 'sales_iva_0',
  salesExento: 'sales_exento',
  ivaTrasladadoCobrado: 'iva_trasladado_cobrado',
  ivaTrasladadoNoCobrado: 'iva_trasladado_no_cobrado',
  ivaAcreditable: 'iva_acreditable',
  clientes: 'clientes',
  isrRetenidoPorClientes: 'isr_retenido_por_clientes',
  ivaRetenidoPorClientes: 'iva_retenido_por_clientes',
  discounts: 'discounts',
  customerCredits: 'customer_credits',
  bankSuspense: 'bank_suspense',
  connectorFeesPayable: per('connector_fees_payable'),
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
