// Reports over the double-entry ledger: trial balance (balanza), pólizas for CONTPAQi and Aspel
// COI, the tenant's account mapping, and the period close. They read ledger_daily_now: ledger_daily
// (per account, currency and accounting day; migration 0050), written in batches by the worker, plus
// the entries not summarized yet, counted from the journal (migration 0180): exact in one snapshot.
// Accounting days and the close rule: docs/reports.md.
import { accounts } from '../../kernel/accounts.js';
import { ApiError } from '../../kernel/errors.js';
import { nowFor } from '../../kernel/clock.js';
import type { Db, Sql } from '../../kernel/db.js';
import { saveIdempotent, type IdempotencyHandle } from '../../kernel/idempotency.js';
import type { Principal } from '../../kernel/principal.js';
import { DEFAULT_ACCOUNTS, conceptFor, resolveCode, type ResolvedCode } from '../../formats/polizas/codigo-agrupador.js';
import { contpaqiText } from '../../formats/polizas/contpaqi.js';
import { aspelCoiTsv, aspelCoiXlsx } from '../../formats/polizas/aspel-coi.js';
import { PolizaFormatError, compactDate, dayOf, toAscii, type CfdiRef, type Poliza, type PolizaMovement } from '../../formats/polizas/poliza.js';
import { addMonths, dayWindow, firstOfMonth, localDate } from './period.js';

// ---------------------------------------------------------------- account mapping and settings

export interface ReportSettings {
  contpaqi_poliza_type: number;
  aspel_poliza_type: string;
  folio_offset: number;
}
/**
 * Issue 27 (defect 4): Orquesta's pólizas are numbered from 9001 by default, not 1–31, which are the
 * numbers a company's own daily pólizas of the same type take: a re-import would overwrite them
 * silently (CONTPAQi replaces a póliza of the same type and number).
 */
export const DEFAULT_FOLIO_OFFSET = 9000;
const DEFAULT_SETTINGS: ReportSettings = { contpaqi_poliza_type: 3, aspel_poliza_type: 'Dr', folio_offset: DEFAULT_FOLIO_OFFSET };

async function loadMapping(db: Db, p: Principal): Promise<{ rules: Map<string, string>; settings: ReportSettings; defaultSettings: boolean; updatedAt?: Date }> {
  const [rules, settings] = await Promise.all([
    db`select account, code, updated_at from report_account_mappings where tenant_id = ${p.tenantId} and livemode = ${p.livemode}`,
    db`select * from report_settings where tenant_id = ${p.tenantId} and livemode = ${p.livemode}`,
  ]);
  const s = settings[0];
  return {
    rules: new Map(rules.map((r) => [r.account as string, r.code as string])),
    settings: s ? { contpaqi_poliza_type: Number(s.contpaqi_poliza_type), aspel_poliza_type: s.aspel_poliza_type as string, folio_offset: Number(s.folio_offset) } : DEFAULT_SETTINGS,
    defaultSettings: !s,
    updatedAt: s ? (s.updated_at as Date) : undefined,
  };
}

export interface AccountMappingBody {
  rules?: Record<string, string>;
  contpaqi_poliza_type?: number;
  aspel_poliza_type?: string;
  folio_offset?: number;
}

const ACCOUNT_RE = /^[a-z][a-z0-9_]*(:([A-Za-z0-9_.-]+|\*))?$/;
const CODE_RE = /^[A-Za-z0-9][A-Za-z0-9.-]{0,19}$/;

async function mappingView(db: Db, p: Principal) {
  const m = await loadMapping(db, p);
  const seen = await db`select distinct account from ledger_daily_now where tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
  const accounts = new Set<string>([...seen.map((r) => r.account as string), ...DEFAULT_ACCOUNTS.filter((d) => !d.pattern.endsWith(':*')).map((d) => d.pattern)]);
  for (const k of m.rules.keys()) if (!k.endsWith(':*')) accounts.add(k);
  return {
    object: 'account_mapping' as const,
    livemode: p.livemode,
    rules: Object.fromEntries([...m.rules].sort(([a], [b]) => (a < b ? -1 : 1))),
    accounts: [...accounts].sort().map((account) => {
      const r = resolveCode(account, m.rules);
      return { account, code: r.code, source: r.source, default_code: resolveCode(account, new Map()).code, name: conceptFor(account) };
    }),
    defaults: DEFAULT_ACCOUNTS.map((d) => ({ account: d.pattern, code: d.code, name: d.name })),
    ...m.settings,
    ...(m.updatedAt ? { updated_at: m.updatedAt.toISOString() } : {}),
  };
}

export const getAccountMapping = (deps: { sql: Sql }, p: Principal) => mappingView(deps.sql, p);

/** PUT: replaces the tenant's rules and settings (omitted settings return to their defaults). */
export async function putAccountMapping(deps: { sql: Sql }, p: Principal, body: AccountMappingBody, idem?: IdempotencyHandle) {
  const rules = Object.entries(body.rules ?? {});
  for (const [account, code] of rules) {
    if (!ACCOUNT_RE.test(account)) throw new ApiError('reports.invalid_account_mapping', `\`rules\` key ${JSON.stringify(account)} is not a ledger account (such as \`sales\` or \`connector_fees:sim\`) nor a \`prefix:*\` pattern.`);
    if (typeof code !== 'string' || !CODE_RE.test(code)) throw new ApiError('reports.invalid_account_mapping', `\`rules.${account}\` ${JSON.stringify(code)} is not an accounting code: 1–20 letters, digits, \`.\` or \`-\`, starting with a letter or digit.`);
  }
  const s = { ...DEFAULT_SETTINGS, ...body };
  return deps.sql.begin(async (tx) => {
    await tx`delete from report_account_mappings where tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
    if (rules.length) {
      await tx`insert into report_account_mappings ${tx(rules.map(([account, code]) => ({ tenant_id: p.tenantId, livemode: p.livemode, account, code })))}`;
    }
    await tx`
      insert into report_settings (tenant_id, livemode, contpaqi_poliza_type, aspel_poliza_type, folio_offset, updated_at)
      values (${p.tenantId}, ${p.livemode}, ${s.contpaqi_poliza_type}, ${s.aspel_poliza_type}, ${s.folio_offset}, now())
      on conflict (tenant_id, livemode) do update set contpaqi_poliza_type = excluded.contpaqi_poliza_type,
        aspel_poliza_type = excluded.aspel_poliza_type, folio_offset = excluded.folio_offset, updated_at = now()`;
    const view = await mappingView(tx, p);
    await saveIdempotent(tx, idem, 200, view);
    return view;
  });
}

// ---------------------------------------------------------------- balances

export interface AccountBalance {
  account: string;
  currency: string;
  opening_balance_minor: number;
  debits_minor: number;
  credits_minor: number;
  closing_balance_minor: number;
}

/** Per account: balance before `from`, debits and credits in [from, to), balance at `to` (debit positive). */
async function balances(db: Db, p: Principal, from: string, to: string, currency?: string): Promise<AccountBalance[]> {
  const sql = db as Sql;
  const rows = await db`
    select account, currency,
           coalesce(sum(debit_minor - credit_minor) filter (where day < ${from}::date), 0)::bigint as opening,
           coalesce(sum(debit_minor) filter (where day >= ${from}::date), 0)::bigint as debits,
           coalesce(sum(credit_minor) filter (where day >= ${from}::date), 0)::bigint as credits
      from ledger_daily_now
     where tenant_id = ${p.tenantId} and livemode = ${p.livemode} ${currency ? sql`and currency = ${currency}` : sql``} and day < ${to}::date
     group by account, currency
     order by currency, account`;
  return rows
    .map((r) => {
      const [opening, debits, credits] = [Number(r.opening), Number(r.debits), Number(r.credits)];
      return { account: r.account as string, currency: r.currency as string, opening_balance_minor: opening, debits_minor: debits, credits_minor: credits, closing_balance_minor: opening + debits - credits };
    })
    .filter((b) => b.opening_balance_minor !== 0 || b.debits_minor !== 0 || b.credits_minor !== 0);
}

const totalsOf = (bs: AccountBalance[]) => ({
  opening_balance_minor: bs.reduce((s, b) => s + b.opening_balance_minor, 0),
  debits_minor: bs.reduce((s, b) => s + b.debits_minor, 0),
  credits_minor: bs.reduce((s, b) => s + b.credits_minor, 0),
  closing_balance_minor: bs.reduce((s, b) => s + b.closing_balance_minor, 0),
});

export async function trialBalance(deps: { readSql: Sql }, p: Principal, q: { from?: string; to?: string; currency?: string }) {
  const db = deps.readSql;
  const w = await dayWindow(db, p, q);
  const currency = q.currency ?? 'MXN';
  const [bs, m, closed] = await Promise.all([
    balances(db, p, w.from, w.to, currency),
    loadMapping(db, p),
    db`select max(period) as last from ledger_period_closes where tenant_id = ${p.tenantId} and livemode = ${p.livemode}`,
  ]);
  const last = closed[0].last ? localDateOfDate(closed[0].last as Date) : undefined;
  const totals = totalsOf(bs);
  return {
    object: 'trial_balance' as const,
    livemode: p.livemode,
    currency,
    period_from: w.from,
    period_to: w.to,
    accounts: bs.map((b) => {
      const r = resolveCode(b.account, m.rules);
      const { currency: _c, account, ...rest } = b;
      return { account, code: r.code, code_source: r.source, name: conceptFor(account), ...rest };
    }),
    totals,
    balanced: totals.debits_minor === totals.credits_minor && totals.opening_balance_minor === 0 && totals.closing_balance_minor === 0,
    ...(last ? { closed_through: addMonths(last, 1) } : {}),
    closed: last !== undefined && w.to <= addMonths(last, 1),
  };
}

/** A `date` column comes back as a Date at UTC midnight. */
const localDateOfDate = (d: Date) => d.toISOString().slice(0, 10);

// ---------------------------------------------------------------- pólizas

export type PolizaFormat = 'contpaqi' | 'aspel_coi';
export const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

export interface PolizasFile {
  filename: string;
  contentType: string;
  body: string | Buffer;
  /** Accounting codes that came from the default mapping (X-Service-Account-Mapping-Defaults). */
  defaults: string[];
  polizaCount: number;
  /** The póliza numbers used, `first-last` (and `default-offset` when the tenant has not set one). */
  folios: string;
}

/** One póliza per accounting day with postings, of the MXN books: a cargo and an abono movement per account with debits/credits that day. */
export async function polizas(deps: { readSql: Sql }, p: Principal, q: { format: PolizaFormat; from?: string; to?: string }, accept?: string): Promise<PolizasFile> {
  const db = deps.readSql;
  const w = await dayWindow(db, p, q);
  if (q.format === 'aspel_coi' && addMonths(firstOfMonth(w.from), 1) < w.to) {
    throw new ApiError('reports.invalid_period', `Aspel COI pólizas carry only the day of the month, so one file holds one month: ${w.from}..${w.to} spans more (ask e.g. from=${firstOfMonth(w.from)}&to=${addMonths(firstOfMonth(w.from), 1)}).`);
  }
  const [days, cfdis, m] = await Promise.all([
    db`
      select day, account, sum(debit_minor)::bigint as debits, sum(credit_minor)::bigint as credits
        from ledger_daily_now
       where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and currency = 'MXN' and day >= ${w.from}::date and day < ${w.to}::date
       group by day, account
       order by day, account`,
    db`
      select e.accounting_date as day, f.uuid_fiscal, f.issued_at, f.serie, f.folio, f.rfc_emisor, f.rfc_receptor, f.total_minor
        from journal_entries e
        join attempts a on a.id = e.ref_id and a.tenant_id = e.tenant_id
        join cfdi_facts f on f.tenant_id = a.tenant_id and f.livemode = a.livemode and f.payment_intent_id = a.payment_intent_id
       where e.tenant_id = ${p.tenantId} and e.livemode = ${p.livemode} and e.kind = 'charge.captured' and e.ref_type = 'attempt'
         and e.accounting_date >= ${w.from}::date and e.accounting_date < ${w.to}::date
      union all
      -- the entries the CFDIs post themselves (PPD, REP, credit note, cancellations, tax adjustments)
      select e.accounting_date as day, d.uuid_fiscal, d.fecha at time zone 'America/Mexico_City', d.serie, d.folio, fp.rfc, d.receptor_rfc, d.total_minor
        from journal_entries e
        join cfdi_documents d on d.tenant_id = e.tenant_id and d.livemode = e.livemode and d.id = e.ref_id
        left join fiscal_profiles fp on fp.tenant_id = d.tenant_id and fp.livemode = d.livemode
       where e.tenant_id = ${p.tenantId} and e.livemode = ${p.livemode} and e.ref_type in ('invoice', 'invoice_payment', 'credit_note')
         and e.accounting_date >= ${w.from}::date and e.accounting_date < ${w.to}::date
       order by 1, 3, 2`,
    loadMapping(db, p),
  ]);
  const defaults = new Set<string>();
  const code = (account: string): ResolvedCode => {
    const r = resolveCode(account, m.rules);
    if (r.source === 'default') defaults.add(r.code);
    return r;
  };
  const cfdiByDay = new Map<string, CfdiRef[]>();
  for (const c of cfdis) {
    const day = localDateOfDate(c.day as Date);
    const list = cfdiByDay.get(day) ?? [];
    if (list.some((x) => x.uuid === c.uuid_fiscal)) continue; // a CFDI with both a capture and its own entry that day
    list.push({
      uuid: c.uuid_fiscal as string,
      date: localDate(c.issued_at as Date),
      serie: (c.serie as string | null) ?? undefined,
      folio: (c.folio as string | null) ?? undefined,
      rfcEmisor: (c.rfc_emisor as string | null) ?? undefined,
      rfcReceptor: (c.rfc_receptor as string | null) ?? undefined,
      totalMinor: c.total_minor === null ? undefined : Number(c.total_minor),
    });
    cfdiByDay.set(day, list);
  }
  const byDay = new Map<string, PolizaMovement[]>();
  for (const r of days) {
    const day = localDateOfDate(r.day as Date);
    const list = byDay.get(day) ?? [];
    const account = r.account as string;
    const reference = `ORQ-${compactDate(day)}`;
    const concept = conceptFor(account);
    const debits = Number(r.debits);
    const credits = Number(r.credits);
    // The day's CFDIs document its sales: tied to the income movement.
    const cfdisHere = account === accounts.sales ? cfdiByDay.get(day) : undefined;
    if (debits > 0) list.push({ account: code(account).code, side: 'cargo', amountMinor: debits, concept, reference });
    if (credits > 0) list.push({ account: code(account).code, side: 'abono', amountMinor: credits, concept, reference, ...(cfdisHere?.length ? { cfdis: cfdisHere } : {}) });
    byDay.set(day, list);
  }
  const list: Poliza[] = [...byDay].map(([day, movements]) => ({
    date: day,
    folio: m.settings.folio_offset + dayOf(day),
    concept: toAscii(`Orquesta ${day}: cobros, reembolsos y comisiones del dia`),
    movements,
    ...(cfdiByDay.get(day)?.length ? { cfdis: cfdiByDay.get(day) } : {}),
  }));
  const xlsx = q.format === 'aspel_coi' && !!accept && accept.toLowerCase().includes(XLSX_TYPE);
  const base = `polizas_${q.format}_${w.from}_${w.to}`;
  try {
    const body =
      q.format === 'contpaqi'
        ? contpaqiText(list, { polizaType: m.settings.contpaqi_poliza_type })
        : xlsx
          ? await aspelCoiXlsx(list, { polizaType: m.settings.aspel_poliza_type })
          : aspelCoiTsv(list, { polizaType: m.settings.aspel_poliza_type });
    return {
      filename: `${base}.${xlsx ? 'xlsx' : 'txt'}`,
      contentType: xlsx ? XLSX_TYPE : 'text/plain; charset=windows-1252',
      body,
      defaults: [...defaults].sort(),
      polizaCount: list.length,
      folios: list.length ? `${Math.min(...list.map((x) => x.folio))}-${Math.max(...list.map((x) => x.folio))}${m.defaultSettings ? '; default-offset' : ''}` : '',
    };
  } catch (e) {
    // A póliza that cannot be written as the program reads it (a code longer than its field): the caller's mapping.
    if (e instanceof PolizaFormatError) throw new ApiError('reports.invalid_account_mapping', `The pólizas cannot be written: ${e.message}. Check the account mapping (PUT /v1/reports/account_mapping).`);
    throw e;
  }
}

// ---------------------------------------------------------------- period close

export interface PeriodClose {
  object: 'period_close';
  livemode: boolean;
  year: number;
  month: number;
  period_from: string;
  period_to: string;
  status: 'closed';
  closed_at: string;
  balances: AccountBalance[];
  totals: Record<string, { debits_minor: number; credits_minor: number }>;
}

function closeView(p: Principal, period: string, closedAt: Date, bs: AccountBalance[]): PeriodClose {
  const totals: PeriodClose['totals'] = {};
  for (const b of bs) {
    const t = (totals[b.currency] ??= { debits_minor: 0, credits_minor: 0 });
    t.debits_minor += b.debits_minor;
    t.credits_minor += b.credits_minor;
  }
  return {
    object: 'period_close',
    livemode: p.livemode,
    year: Number(period.slice(0, 4)),
    month: Number(period.slice(5, 7)),
    period_from: period,
    period_to: addMonths(period, 1),
    status: 'closed',
    closed_at: closedAt.toISOString(),
    balances: bs,
    totals,
  };
}

export function parsePeriod(year: string, month: string): string {
  const y = /^\d{4}$/.test(year) ? Number(year) : NaN;
  const mo = /^\d{1,2}$/.test(month) ? Number(month) : NaN;
  if (!(y >= 1970 && y <= 9999) || !(mo >= 1 && mo <= 12)) {
    throw new ApiError('reports.invalid_period', `The period ${year}/${month} is not a month: the path takes a four-digit year and a month 1–12 (e.g. /v1/reports/periods/2026/3/close).`);
  }
  return `${y}-${String(mo).padStart(2, '0')}-01`;
}

/**
 * Closes a month of the tenant's books (this mode). Under the book's exclusive lock (postings hold
 * it shared), so the balances frozen here include every posting committed before and none after;
 * later postings dated in it or before are carried by the ledger trigger to the first open month.
 * Closing a closed month answers the first close. Earlier months with postings must be closed first.
 */
export async function closePeriod(deps: { sql: Sql }, p: Principal, year: string, month: string, idem?: IdempotencyHandle): Promise<PeriodClose> {
  const period = parsePeriod(year, month);
  return deps.sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(orq_book_lock_key(${p.tenantId}, ${p.livemode}))`;
    const now = await nowFor(tx, p.tenantId, p.livemode);
    const today = localDate(now);
    if (period > firstOfMonth(today)) {
      throw new ApiError('reports.period_not_closable', `${period.slice(0, 7)} has not started on this account's clock (today is ${today}): only the current or an earlier month can be closed.`);
    }
    const [existing] = await tx`select * from ledger_period_closes where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and period = ${period}::date`;
    let view: PeriodClose;
    if (existing) {
      view = closeView(p, period, existing.closed_at as Date, existing.balances as AccountBalance[]);
    } else {
      const [{ last }] = await tx`select max(period) as last from ledger_period_closes where tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
      const lastClosed = last ? localDateOfDate(last as Date) : undefined;
      if (lastClosed && period < lastClosed) {
        // A month before the last close, never closed on its own (it had no postings): closed by that close.
        const [cover] = await tx`select closed_at from ledger_period_closes where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and period > ${period}::date order by period limit 1`;
        view = closeView(p, period, cover.closed_at as Date, await balances(tx, p, period, addMonths(period, 1)));
      } else {
        const openFrom = lastClosed ? addMonths(lastClosed, 1) : '0001-01-01';
        const [earlier] = await tx`
          select min(day) as day from ledger_daily_now
           where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and day >= ${openFrom}::date and day < ${period}::date`;
        if (earlier.day) {
          const open = localDateOfDate(earlier.day as Date).slice(0, 7);
          throw new ApiError('reports.period_not_closable', `${open} has postings and is still open: close the months in order (POST /v1/reports/periods/${open.slice(0, 4)}/${Number(open.slice(5, 7))}/close first).`);
        }
        const bs = await balances(tx, p, period, addMonths(period, 1));
        const [row] = await tx`
          insert into ledger_period_closes (tenant_id, livemode, period, closed_at_tenant, closed_by, balances)
          values (${p.tenantId}, ${p.livemode}, ${period}::date, ${now}, ${p.keyId}, ${tx.json(bs as never)})
          returning closed_at`;
        view = closeView(p, period, row.closed_at as Date, bs);
      }
    }
    await saveIdempotent(tx, idem, 200, view);
    return view;
  });
}
