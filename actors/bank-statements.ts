// Bank statements and reconciliation (issue 16; service-spec: bank_statement, Bank reconciliation;
// decisions.md §3 paths, §6 matching). docs/bank-statements.md has the choices.
//
// - Import: the fields are checked in the spec's order of codes, the file is parsed whole
//   (formats/bank-statements.ts) before anything is written, then one transaction stores the
//   statement and its credit lines, matches them and posts the ledger entries of the matches. A
//   failed import stores nothing. The file's SHA-256 (per tenant and mode) is the idempotency: the
//   same bytes again answer the stored statement with `already_imported: true`.
// - Matching is set-based SQL over the statement's open lines (50,000 lines are one statement, not
//   50,000 steps), serialized per book by an advisory lock that charges succeeding take too; the
//   unique index "one matched line per charge" holds it across statements whatever the writer.
// - Late evidence: a SPEI charge that succeeds after its line was imported matches it in the
//   charge's own transaction (a reaction to payment_intent.succeeded); POST …/rematch re-runs the
//   import's matching over a statement's open lines.
// Statements are immutable documents and lines change only by matching, so they are not entity
// actor resources (no machine, no version): see docs/bank-statements.md, "Why not the entity actor".
import { accounts, prefixOf } from '../kernel/accounts.js';
import { createHash, randomUUID } from 'node:crypto';
import { ApiError } from '../kernel/errors.js';
import type { Capability } from '../kernel/capability.js';
import type { Db, Sql } from '../kernel/db.js';
import { postEntry, summarizeBook, type Line } from '../kernel/ledger.js';
import type { Principal } from '../kernel/principal.js';
import { parseStatement, PRESETS, StatementParseError, type Mapping, type ParsedStatement, type Preset } from '../formats/bank-statements.js';
import { SUCCEEDED_BY, type SucceededBy } from './payment-intent-plan.js';

/** service-spec Limits: bank statement file 5 MiB. */
export const MAX_STATEMENT_BYTES = 5 * 1024 * 1024;
/** The route's body cap: the file plus room for a multipart envelope and its form fields. */
export const MAX_IMPORT_BODY_BYTES = MAX_STATEMENT_BYTES + 64 * 1024;
/** `tolerance_days` when the import does not say. */
export const DEFAULT_TOLERANCE_DAYS = 3;
export const MATCH_STATUSES = ['matched', 'unmatched', 'partial', 'duplicate'] as const;
export type MatchStatus = (typeof MATCH_STATUSES)[number];
/** The day of a charge and of the books. */
const BOOK_TZ = 'America/Mexico_City';

export interface ImportParams {
  bank: string;
  periodStart: string;
  periodEnd: string;
  toleranceDays: number;
  mapping: Mapping;
  hasHeader: boolean;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
function isDay(s: string | undefined): boolean {
  const m = s === undefined ? null : DATE.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));
  return d.getUTCFullYear() === +m[1] && d.getUTCMonth() === +m[2] - 1 && d.getUTCDate() === +m[3];
}
const present = (v: string | undefined): v is string => v !== undefined && v.trim() !== '';

function columnIndex(name: string, v: string | undefined): number | undefined {
  if (!present(v)) return undefined;
  if (!/^\d{1,4}$/.test(v.trim())) throw new ApiError('bank_statement.invalid_mapping', `\`${name}\` must be a 0-based column number (a non-negative integer); got ${JSON.stringify(v.slice(0, 40))}.`);
  return Number(v.trim());
}

/**
 * The import's fields (multipart form fields over the query), checked in the order of the spec's
 * codes: bank, period, tolerance, preset, mapping.
 */
export function importParams(f: Record<string, string | undefined>): ImportParams {
  const bank = (f.bank ?? '').trim();
  if (!bank) throw new ApiError('bank_statement.bank_required', '`bank` is required: the name of the bank or account the statement comes from (e.g. "BBVA 0123").');
  if (bank.length > 100) throw new ApiError('bank_statement.bank_required', '`bank` is at most 100 characters.');
  const ps = f.period_start?.trim();
  const pe = f.period_end?.trim();
  if (!present(ps)) throw new ApiError('bank_statement.invalid_period', '`period_start` is required (yyyy-MM-dd).');
  if (!present(pe)) throw new ApiError('bank_statement.invalid_period', '`period_end` is required (yyyy-MM-dd).');
  if (!isDay(ps)) throw new ApiError('bank_statement.invalid_period', `\`period_start\` must be a date yyyy-MM-dd; got ${JSON.stringify(ps.slice(0, 40))}.`);
  if (!isDay(pe)) throw new ApiError('bank_statement.invalid_period', `\`period_end\` must be a date yyyy-MM-dd; got ${JSON.stringify(pe.slice(0, 40))}.`);
  if (pe < ps) throw new ApiError('bank_statement.invalid_period', `The period is inverted: \`period_end\` (${pe}) is before \`period_start\` (${ps}).`);
  let toleranceDays = DEFAULT_TOLERANCE_DAYS;
  if (present(f.tolerance_days)) {
    const t = f.tolerance_days.trim();
    if (!/^-?\d{1,6}$/.test(t) || Number(t) < 0 || Number(t) > 366) {
      throw new ApiError('bank_statement.invalid_tolerance', `\`tolerance_days\` must be an integer from 0 to 366 (days between a line's value date and its charge); got ${JSON.stringify(t.slice(0, 40))}.`);
    }
    toleranceDays = Number(t);
  }
  let hasHeader = true;
  let mapping: Mapping;
  const reference = columnIndex('reference_column', f.reference_column);
  if (present(f.preset)) {
    const preset = f.preset.trim().toLowerCase();
    if (!(PRESETS as readonly string[]).includes(preset)) throw new ApiError('bank_statement.unknown_preset', `\`preset\` must be one of ${PRESETS.join(', ')}; got ${JSON.stringify(f.preset.slice(0, 40))}.`);
    mapping = { kind: 'preset', preset: preset as Preset, ...(reference !== undefined ? { reference } : {}) };
  } else {
    const names = ['date_column', 'description_column', 'credit_column', 'debit_column'] as const;
    const missing = names.filter((n) => !present(f[n]));
    if (missing.length) throw new ApiError('bank_statement.mapping_required', `Without \`preset\`, the columns are required: ${missing.map((n) => `\`${n}\``).join(', ')} missing (0-based column numbers).`);
    const [date, description, credit, debit] = names.map((n) => columnIndex(n, f[n])!);
    mapping = { kind: 'columns', date, description, credit, debit, ...(reference !== undefined ? { reference } : {}) };
    const used = [date, description, credit, debit, ...(reference !== undefined ? [reference] : [])];
    if (new Set(used).size !== used.length) throw new ApiError('bank_statement.invalid_mapping', `Two columns have the same number (${used.join(', ')}): date, description, credit, debit and reference must be different columns.`);
  }
  if (present(f.has_header)) {
    const h = f.has_header.trim().toLowerCase();
    if (h !== 'true' && h !== 'false') throw new ApiError('bank_statement.invalid_mapping', `\`has_header\` must be true or false; got ${JSON.stringify(f.has_header.slice(0, 40))}.`);
    hasHeader = h === 'true';
  }
  return { bank, periodStart: ps, periodEnd: pe, toleranceDays, mapping, hasHeader };
}

// ---------------------------------------------------------------------------------------------
// Views

type Row = Record<string, unknown>;
const day = (v: unknown) => (v instanceof Date ? v.toISOString().slice(0, 10) : String(v));

export function statementView(r: Row, alreadyImported = false) {
  return {
    id: r.id as string,
    object: 'bank_statement' as const,
    bank: r.bank as string,
    period_start: day(r.period_start),
    period_end: day(r.period_end),
    filename: (r.filename as string | null) ?? null,
    tolerance_days: Number(r.tolerance_days),
    preset: (r.preset as string | null) ?? null,
    lines_total: Number(r.lines_total),
    matched: Number(r.matched ?? 0),
    partial: Number(r.partial ?? 0),
    unmatched: Number(r.unmatched ?? 0),
    exceptions: Number(r.partial ?? 0) + Number(r.charges_without_line ?? 0),
    charges_without_line: Number(r.charges_without_line ?? 0),
    debit_rows: Number(r.debit_rows),
    duplicates: Number(r.duplicates ?? 0) + Number(r.duplicate_debits ?? 0),
    file_sha256: r.file_sha256 as string,
    already_imported: alreadyImported,
    livemode: r.livemode as boolean,
    created_at: (r.created_at as Date).toISOString(),
  };
}

export function lineView(r: Row) {
  return {
    id: Number(r.id),
    object: 'bank_statement_line' as const,
    statement_id: r.statement_id as string,
    row_number: Number(r.row_number),
    value_date: day(r.value_date),
    description: r.description as string,
    reference: (r.reference as string | null) ?? null,
    credit_minor: Number(r.credit_minor),
    currency: r.currency as string,
    match_status: r.match_status as MatchStatus,
    payment_intent_id: (r.payment_intent_id as string | null) ?? null,
    attempt_id: (r.attempt_id as string | null) ?? null,
    matched_by: (r.matched_by as string | null) ?? null,
    match_rule: (r.match_rule as string | null) ?? null,
    matched_at: r.matched_at ? (r.matched_at as Date).toISOString() : null,
  };
}

/**
 * The succeeded SPEI charges of a tenant whose day (America/Mexico_City, the tenant's clock) is in
 * [start, end] (cash_facts_now: one row per captured charge, summarized or pending (migration 0180); the
 * range on occurred_at uses cash_facts' index).
 * `tenant`, `livemode`, `start`, `end` are SQL fragments (columns of the outer query or values).
 */
const speiChargesOfPeriod = (sql: Sql, tenant: ReturnType<Sql>, livemode: ReturnType<Sql>, start: ReturnType<Sql>, end: ReturnType<Sql>) => sql`
  select cf.attempt_id, cf.payment_intent_id, cf.amount_minor + cf.tip_minor as total_minor, cf.currency,
         cf.occurred_at, cf.entry_id, cf.tenant_id, cf.livemode
    from cash_facts_now cf
   where cf.tenant_id = ${tenant} and cf.livemode = ${livemode} and cf.currency = 'MXN'
     and cf.occurred_at >= (${start}::date::timestamp at time zone ${BOOK_TZ}) and cf.occurred_at < ((${end}::date + 1)::timestamp at time zone ${BOOK_TZ})
     and cf.kind = 'charge' and cf.method = 'spei'`;

/** Counts of a statement (computed: late evidence changes them) and its charges of the period that no line matched. */
function statementSelect(sql: Sql, where: ReturnType<Sql>) {
  return sql`
    select s.*,
           c.matched, c.partial, c.unmatched, c.duplicates, c.duplicate_debits,
           (select count(*) from (${speiChargesOfPeriod(sql, sql`s.tenant_id`, sql`s.livemode`, sql`s.period_start`, sql`s.period_end`)}) ch
             where not exists (select 1 from bank_statement_lines m where m.attempt_id = ch.attempt_id and m.match_status = 'matched')) as charges_without_line
      from bank_statements s
      cross join lateral (
        select count(*) filter (where l.match_status = 'matched') as matched,
               count(*) filter (where l.match_status = 'partial') as partial,
               count(*) filter (where l.match_status = 'unmatched') as unmatched,
               count(*) filter (where l.match_status = 'duplicate') as duplicates,
               (select count(*) from bank_statement_debits d where d.statement_id = s.id and d.duplicate) as duplicate_debits
          from bank_statement_lines l where l.statement_id = s.id) c
     where ${where}`;
}

type Scope = Pick<Principal, 'tenantId' | 'livemode'>;

async function readStatement(db: Sql, p: Scope, id: string, alreadyImported = false) {
  const [r] = await statementSelect(db, db`s.id = ${id} and s.tenant_id = ${p.tenantId} and s.livemode = ${p.livemode}`);
  if (!r) throw new ApiError('bank_statement.not_found');
  return statementView(r, alreadyImported);
}

export async function getStatement(deps: { sql: Sql }, p: Scope, id: string) {
  return readStatement(deps.sql, p, id);
}

/** Simple list (service-spec Limits: whole set, optional limit), newest first. */
export async function listStatements(deps: { sql: Sql }, p: Scope, q: { limit?: number }) {
  const limit = Math.min(Math.max(q.limit ?? 100, 1), 500);
  const rows = await statementSelect(deps.sql, deps.sql`s.tenant_id = ${p.tenantId} and s.livemode = ${p.livemode} order by s.created_at desc, s.id limit ${limit}`);
  return { object: 'list' as const, data: rows.map((r) => statementView(r)) };
}

// Cursors: the last line id of the page, opaque (base64url of `l<id>`). Lines are read in id order.
const encodeCursor = (id: number) => Buffer.from(`l${id}`).toString('base64url');
function decodeCursor(c: string): number {
  const s = /^[A-Za-z0-9_-]{1,40}$/.test(c) ? Buffer.from(c, 'base64url').toString() : '';
  const m = /^l(\d{1,15})$/.exec(s);
  if (!m) throw new ApiError('bank_statement.invalid_cursor');
  return Number(m[1]);
}

export interface LinesQuery {
  match_status?: string;
  cursor?: string;
  limit?: number;
}

function pageArgs(q: LinesQuery) {
  if (q.match_status !== undefined && !(MATCH_STATUSES as readonly string[]).includes(q.match_status)) {
    throw new ApiError('bank_statement.invalid_match_status', `\`match_status\` must be one of ${MATCH_STATUSES.join(', ')}; got ${JSON.stringify(String(q.match_status).slice(0, 40))}.`);
  }
  return { after: q.cursor ? decodeCursor(q.cursor) : 0, limit: Math.min(Math.max(q.limit ?? 100, 1), 500), status: q.match_status as MatchStatus | undefined };
}

async function ownStatement(sql: Sql, p: Scope, id: string) {
  const [s] = await sql`select id from bank_statements where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
  if (!s) throw new ApiError('bank_statement.not_found');
}

/** Lines of one statement in file order, optionally by match status; cursor pagination. */
export async function listLines(deps: { sql: Sql }, p: Scope, id: string, q: LinesQuery) {
  const { after, limit, status } = pageArgs(q);
  await ownStatement(deps.sql, p, id);
  const sql = deps.sql;
  const rows = await sql`
    select * from bank_statement_lines
     where statement_id = ${id} and id > ${after} ${status ? sql`and match_status = ${status}` : sql``}
     order by id limit ${limit + 1}`;
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  return { object: 'list' as const, data: page.map(lineView), has_more: more, ...(more ? { next_cursor: encodeCursor(Number(page[page.length - 1].id)) } : {}) };
}

/**
 * The three-way view of a statement: each line with its charge, the charge's ledger entries (the
 * capture and the bank deposit the match posted) and its CFDI when there is one; and the SPEI
 * charges of the period that no line matched. Lines are paged like the lines listing.
 */
export async function reconciliation(deps: { sql: Sql }, p: Scope, id: string, q: LinesQuery) {
  const { after, limit, status } = pageArgs(q);
  const sql = deps.sql;
  const statement = await readStatement(sql, p, id);
  const rows = await sql`
    select l.*, pi.receipt_code, pi.amount_minor + pi.tip_minor as charge_total_minor, pi.status as intent_status, a.provider_ref, a.connector_key,
           cf.occurred_at as charge_succeeded_at, cf.entry_id as capture_entry_id,
           l.deposit_entry_id, inv.id as invoice_id, inv.uuid_fiscal, inv.status as invoice_status
      from bank_statement_lines l
      left join payment_intents pi on pi.id = l.payment_intent_id and pi.tenant_id = l.tenant_id
      left join attempts a on a.id = l.attempt_id and a.tenant_id = l.tenant_id
      -- per line, by key in each arm of the view (OFFSET 0: flattened, the join would read every fact of the tenant)
      left join lateral (select cf.occurred_at, cf.entry_id from cash_facts_now cf
                          where cf.kind = 'charge' and cf.source_id = l.attempt_id and cf.tenant_id = l.tenant_id offset 0) cf on true
      left join lateral (select i.id, i.uuid_fiscal, i.status from invoices i
                          where i.payment_intent_id = l.payment_intent_id and i.tenant_id = l.tenant_id and i.livemode = l.livemode
                          order by (i.status = 'stamped') desc, i.created_at desc limit 1) inv on true
     where l.tenant_id = ${p.tenantId} and l.statement_id = ${id} and l.id > ${after} ${status ? sql`and l.match_status = ${status}` : sql``}
     order by l.id limit ${limit + 1}`;
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  const charges = await sql`
    select ch.*, pi.receipt_code, a.provider_ref, inv.uuid_fiscal
      from (${speiChargesOfPeriod(sql, sql`${p.tenantId}::uuid`, sql`${p.livemode}::boolean`, sql`${statement.period_start}`, sql`${statement.period_end}`)}) ch
      join payment_intents pi on pi.id = ch.payment_intent_id and pi.tenant_id = ch.tenant_id
      join attempts a on a.id = ch.attempt_id and a.tenant_id = ch.tenant_id
      left join lateral (select i.uuid_fiscal from invoices i where i.payment_intent_id = ch.payment_intent_id and i.tenant_id = ch.tenant_id and i.livemode = ch.livemode and i.status = 'stamped' limit 1) inv on true
     where not exists (select 1 from bank_statement_lines m where m.attempt_id = ch.attempt_id and m.tenant_id = ch.tenant_id and m.match_status = 'matched')
     order by ch.occurred_at, ch.attempt_id limit 1000`;
  return {
    object: 'bank_reconciliation' as const,
    statement,
    lines: {
      object: 'list' as const,
      data: page.map((r) => ({
        line: lineView(r),
        charge: r.payment_intent_id
          ? {
              payment_intent_id: r.payment_intent_id as string,
              attempt_id: r.attempt_id as string,
              status: r.intent_status as string,
              amount_minor: Number(r.charge_total_minor),
              receipt_code: r.receipt_code as string,
              provider_ref: (r.provider_ref as string | null) ?? null,
              connector_key: r.connector_key as string,
              succeeded_at: r.charge_succeeded_at ? (r.charge_succeeded_at as Date).toISOString() : null,
            }
          : null,
        ledger: r.payment_intent_id ? { capture_entry_id: (r.capture_entry_id as string | null) ?? null, bank_deposit_entry_id: (r.deposit_entry_id as string | null) ?? null } : null,
        invoice: r.invoice_id ? { id: r.invoice_id as string, uuid_fiscal: (r.uuid_fiscal as string | null) ?? null, status: r.invoice_status as string } : null,
      })),
      has_more: more,
      ...(more ? { next_cursor: encodeCursor(Number(page[page.length - 1].id)) } : {}),
    },
    charges_without_line: charges.map((c) => ({
      payment_intent_id: c.payment_intent_id as string,
      attempt_id: c.attempt_id as string,
      amount_minor: Number(c.total_minor),
      currency: c.currency as string,
      receipt_code: c.receipt_code as string,
      provider_ref: (c.provider_ref as string | null) ?? null,
      succeeded_at: (c.occurred_at as Date).toISOString(),
      capture_entry_id: c.entry_id as string,
      uuid_fiscal: (c.uuid_fiscal as string | null) ?? null,
    })),
  };
}

// ---------------------------------------------------------------------------------------------
// Import and matching

export interface ImportInput {
  bytes: Buffer;
  filename?: string;
  fields: Record<string, string | undefined>;
}

/** The bank's ledger account: `bank:` and the statement's bank name, lower case, spaces as `_`. */
export const bankAccount = (bank: string) => accounts.bank(bank.trim().toLowerCase().replace(/\s+/g, '_').slice(0, 80));

/**
 * The lines of a matched line's `bank.deposit` entry (docs/bank-statements.md "The books and the
 * statement agree"): the bank debited with the line, or `bank_suspense` where the import already
 * posted the open line to bank and suspense; the charge's receivable credited net of the connector's
 * fee (the capture netted it; the bank received gross) and the fee owed to the connector
 * (`connector_fees_payable`), so the receivable ends at zero. One rule for the late evidence and the
 * match by hand (actors/portal-reconcile.ts); matchStatement writes the same lines set-based in SQL.
 */
export function depositLines(l: { bank: string; inSuspense: boolean; currency: string; amountMinor: number }, connector: string, feeMinor: number): Line[] {
  const fee = Math.min(feeMinor, l.amountMinor);
  return [
    { account: l.inSuspense ? accounts.bankSuspense : bankAccount(l.bank), currency: l.currency, amountMinor: l.amountMinor },
    { account: accounts.connectorReceivable(connector), currency: l.currency, amountMinor: -(l.amountMinor - fee) },
    { account: accounts.connectorFeesPayable(connector), currency: l.currency, amountMinor: -fee },
  ];
}

const isUniqueViolation = (e: unknown, constraint: string) => (e as { code?: string; constraint_name?: string })?.code === '23505' && (e as { constraint_name?: string }).constraint_name === constraint;

/**
 * Matches a statement's open lines (unmatched, and partial ones that may now match exactly) to the
 * tenant's succeeded SPEI charges, then posts the bank deposit entry of every matched line that has
 * none. Runs inside the caller's transaction, under the book's reconciliation lock.
 */
async function matchStatement(tx: Db, p: Scope, statementId: string, toleranceDays: number, bank: string, by: 'import' | 'rematch') {
  // One statement: candidates → exact matches (one line per charge, one charge per line) and
  // partial ones → the lines updated → for each newly matched line its deposit entry (id kept on
  // the line) and the entry's lines (depositLines' rule, written here in SQL): the bank account (or suspense, for a line posted there at import)
  // debited, what the connector owes for the charge credited, and the connector's fee, which the
  // capture netted from that receivable but the bank received gross, owed to the connector
  // (`connector_fees_payable`): the charge's receivable ends at zero.
  // Candidates (issue 27): the reference column equal to the attempt's provider_ref (the SPEI clave
  // de rastreo) or to the receipt code; for a line without reference, a token inside the concept equal to either (BBVA writes
  // "SPEI RECIBIDO… / 1234567 PAGO FACTURA W-7Z5WJ"); the referencia numérica of the charge's SPEI
  // instructions in either place, for a charge within the tolerance; and, for a line with no such candidate, the one
  // SPEI charge of the same amount within the tolerance (only `partial`: amount and date agree,
  // nothing identifies the payment).
  //
  // The plan must not depend on statistics: the lines were inserted in this transaction (none yet;
  // this cluster runs autovacuum=off) and the planner's default selectivities make the open lines
  // look like one row. With the earlier form (joins and NOT EXISTS between CTEs) it then chose
  // nested loops that scanned per line: the tenant's whole one-matched-line-per-charge index, the
  // whole day of charges for the amount rule, every line of the tenant for the partial check, and
  // CTE against CTE (bench/RESULTS.md, bench/reconciliation 2026-11-27). So:
  // - every lookup in a big table is a LATERAL subquery per line that the planner cannot flatten
  //   (DISTINCT or OFFSET 0) or a correlated subquery in an expression (never turned into a join):
  //   each is an index lookup with equalities (attempts_provider_ref, payment_intents' receipt
  //   code, attempts_referencia_numerica, cash_facts_pkey, cash_facts_spei_amount, bank_statement_lines_one_per_charge and
  //   bank_statement_lines_charge, migration 0173), whatever the row estimates;
  // - the rules between lines of this statement (first line per charge, then first charge per line;
  //   a line with an exact winner is not partial; a charge matched here is not offered by amount)
  //   are window functions over one set of candidates, not joins between CTEs.
  await tx`
    with open_lines as (
      select l.id, l.tenant_id, l.livemode, l.reference, l.credit_minor, l.value_date,
             case when l.reference is null then array(select t from unnest(regexp_split_to_array(upper(l.description), '[^A-Z0-9-]+')) t where length(t) >= 6) end as tokens
        from bank_statement_lines l
       where l.tenant_id = ${p.tenantId} and l.statement_id = ${statementId} and l.match_status not in ('matched', 'duplicate')),
    -- each open line with its identifying candidates (the line's keys looked up by index), or one row of nulls
    ident as (
      select ol.id as line_id, ol.tenant_id, ol.livemode, ol.credit_minor, ol.value_date,
             c.attempt_id, c.payment_intent_id, c.connector_key, c.fee_minor, c.total_minor, c.charge_date, c.rule
        from open_lines ol
        left join lateral (
          select distinct x.attempt_id, x.payment_intent_id, x.connector_key, x.fee_minor,
                 cf.amount_minor + cf.tip_minor as total_minor, (cf.occurred_at at time zone ${BOOK_TZ})::date as charge_date,
                 case when x.ref_rule = 'referencia_numerica' then x.ref_rule when k.rule = 'reference' then x.ref_rule else 'concept' end as rule
            from (select k0.key, k0.rule,
                         -- a key that is a referencia numérica: 7 significant digits, zero-padded or not (BBVA prints 10)
                         case when k0.key ~ '^0{0,3}[1-9][0-9]{6}$' then k0.key::int end as refnum
                    from (select ol.reference as key, 'reference' as rule where ol.reference is not null
                          union all select t, 'concept' from unnest(ol.tokens) t) k0) k
            cross join lateral (
              select a.id as attempt_id, a.tenant_id, a.payment_intent_id, a.connector_key, coalesce(a.fee_minor, 0) as fee_minor, 'clave_rastreo' as ref_rule from attempts a
               where a.provider_ref = k.key and a.tenant_id = ol.tenant_id and a.livemode = ol.livemode and a.method = 'spei'
              union all
              select a.id, a.tenant_id, a.payment_intent_id, a.connector_key, coalesce(a.fee_minor, 0), 'reference' from payment_intents pi
                join attempts a on a.payment_intent_id = pi.id and a.tenant_id = pi.tenant_id and a.method = 'spei'
               where pi.tenant_id = ol.tenant_id and pi.receipt_code = k.key and pi.livemode = ol.livemode
              union all
              -- the referencia numérica of the charge's SPEI instructions: not unique forever (the sequence
              -- cycles), so only a charge within the date tolerance is a candidate, for partial too
              select a.id, a.tenant_id, a.payment_intent_id, a.connector_key, coalesce(a.fee_minor, 0), 'referencia_numerica' from attempts a
               where k.refnum is not null and a.referencia_numerica = k.refnum and a.tenant_id = ol.tenant_id and a.livemode = ol.livemode and a.method = 'spei') x
            join cash_facts cf on cf.kind = 'charge' and cf.source_id = x.attempt_id and cf.tenant_id = x.tenant_id
           where x.ref_rule <> 'referencia_numerica' or abs(ol.value_date - (cf.occurred_at at time zone ${BOOK_TZ})::date) <= ${toleranceDays}) c on true),
    -- amount and date only, for lines nothing identifies: the SPEI charges of that amount in the window not matched (nor partial) yet
    by_amount as (
      select i.line_id, i.tenant_id, i.credit_minor, b.attempt_id, b.payment_intent_id, b.connector_key, b.fee_minor, b.total_minor,
             count(*) over (partition by i.line_id) as n
        from ident i
        cross join lateral (
          select cf.attempt_id, cf.payment_intent_id, a.connector_key, coalesce(a.fee_minor, 0) as fee_minor, cf.amount_minor + cf.tip_minor as total_minor
            from cash_facts cf
            join attempts a on a.id = cf.attempt_id and a.tenant_id = cf.tenant_id
           where cf.tenant_id = i.tenant_id and cf.livemode = i.livemode and cf.currency = 'MXN' and cf.kind = 'charge' and cf.method = 'spei'
             and cf.amount_minor + cf.tip_minor = i.credit_minor
             and cf.occurred_at >= ((i.value_date - ${toleranceDays}::int)::timestamp at time zone ${BOOK_TZ})
             and cf.occurred_at < ((i.value_date + ${toleranceDays}::int + 1)::timestamp at time zone ${BOOK_TZ})
             and not exists (select 1 from bank_statement_lines m where m.attempt_id = cf.attempt_id and m.tenant_id = cf.tenant_id and m.match_status in ('matched', 'partial'))
          offset 0) b
       where i.attempt_id is null),
    -- every candidate in one set; eligible = an exact match whose charge no line holds yet
    cand as (
      select i.line_id, i.tenant_id, i.credit_minor, i.attempt_id, i.payment_intent_id, i.connector_key, i.fee_minor, i.total_minor, i.rule, 1 as n,
             i.total_minor = i.credit_minor and abs(i.value_date - i.charge_date) <= ${toleranceDays}
               and not exists (select 1 from bank_statement_lines m where m.attempt_id = i.attempt_id and m.tenant_id = ${p.tenantId} and m.match_status = 'matched') as eligible
        from ident i where i.attempt_id is not null
      union all
      select line_id, tenant_id, credit_minor, attempt_id, payment_intent_id, connector_key, fee_minor, total_minor, 'amount_date', n, false from by_amount),
    -- one line per charge (the first in the file) ...
    per_charge as (
      select c.*, case when c.eligible then row_number() over (partition by c.attempt_id, c.eligible order by c.line_id, c.rule) end as rc from cand c),
    -- ... then one charge per line
    per_line as (
      select c.*, case when c.rc = 1 then row_number() over (partition by c.line_id, c.rc = 1 order by c.attempt_id, c.rule) end as rl from per_charge c),
    ranked as (
      select c.*, coalesce(c.rl = 1, false) as won, bool_or(coalesce(c.rl = 1, false)) over (partition by c.line_id) as line_won,
             bool_or(coalesce(c.rl = 1, false)) over (partition by c.attempt_id) as charge_won
        from per_line c),
    -- a line nothing matched exactly that names a charge with another amount
    part as (
      select distinct on (r.line_id) r.line_id, r.tenant_id, r.attempt_id, r.payment_intent_id, r.connector_key, r.fee_minor, r.rule from ranked r
       where r.rule <> 'amount_date' and not r.line_won and r.total_minor <> r.credit_minor
       order by r.line_id, r.attempt_id, r.rule),
    -- a line nothing identifies whose amount only one free charge has (lines with a candidate above never get here)
    part_amount as (
      select distinct on (r.attempt_id) r.line_id, r.tenant_id, r.attempt_id, r.payment_intent_id, r.connector_key, r.fee_minor, r.rule from ranked r
       where r.rule = 'amount_date' and r.n = 1 and not r.charge_won
       order by r.attempt_id, r.line_id),
    -- materialized, and joined to the lines by key columns only (no constant on the lines): the
    -- lines then look like the whole table, so the planner looks each one up by primary key; with a
    -- constant (statement_id = …) they looked like one row and were scanned once per line of upd.
    upd as materialized (
      select line_id, tenant_id, attempt_id, payment_intent_id, connector_key, fee_minor, 'matched' as st, rule from ranked where won
      union all
      select line_id, tenant_id, attempt_id, payment_intent_id, connector_key, fee_minor, 'partial', rule from part
      union all
      select line_id, tenant_id, attempt_id, payment_intent_id, connector_key, fee_minor, 'partial', rule from part_amount),
    u as (
      update bank_statement_lines l
         set match_status = upd.st, attempt_id = upd.attempt_id, payment_intent_id = upd.payment_intent_id, matched_at = now(), matched_by = ${by}, match_rule = upd.rule,
             deposit_entry_id = case when upd.st = 'matched' then gen_random_uuid() end
        from upd
       where l.id = upd.line_id and l.tenant_id = upd.tenant_id and (l.match_status <> upd.st or l.attempt_id is distinct from upd.attempt_id)
      returning l.id, l.deposit_entry_id, l.tenant_id, l.livemode, l.payment_intent_id, l.credit_minor, l.currency,
                ${by !== 'import'} and (select suspense_posted from bank_statements where id = ${statementId} and tenant_id = ${p.tenantId}) as in_suspense, upd.connector_key, upd.fee_minor),
    e as (
      insert into journal_entries (id, tenant_id, livemode, kind, ref_type, ref_id, memo)
      select u.deposit_entry_id, u.tenant_id, u.livemode, 'bank.deposit', 'payment_intent', u.payment_intent_id, 'bank statement line ' || u.id
        from u where u.deposit_entry_id is not null)
    insert into journal_lines (entry_id, tenant_id, livemode, account, currency, amount_minor)
    select u.deposit_entry_id, u.tenant_id, u.livemode, x.account, u.currency, x.amount
      from u cross join lateral (values (case when u.in_suspense then ${accounts.bankSuspense}::text else ${bankAccount(bank)}::text end, u.credit_minor),
                                        (${prefixOf('connector_receivable')} || u.connector_key, -(u.credit_minor - least(u.fee_minor, u.credit_minor))),
                                        (${prefixOf('connector_fees_payable')} || u.connector_key, -least(u.fee_minor, u.credit_minor))) x(account, amount)
     where u.deposit_entry_id is not null and x.amount <> 0`;
}

/**
 * After the import's matching: every credit line still not matched (unmatched or partial) is money in
 * the bank nobody has identified yet, posted to `bank_suspense` (its later match moves it out); every
 * debit line (commissions, transfers out) leaves the bank against suspense too, for the accountant to
 * classify. Duplicates of lines already imported are not posted. So the bank account's balance in
 * the books follows the statement's (issue 27, defect 8).
 */
async function postUnidentified(tx: Db, p: Scope, statementId: string, bank: string): Promise<void> {
  const [c] = await tx`
    with mark as (update bank_statements set suspense_posted = true where id = ${statementId} and tenant_id = ${p.tenantId} returning id)
    select coalesce(sum(credit_minor), 0)::bigint as total from bank_statement_lines
     where tenant_id = ${p.tenantId} and statement_id = (select id from mark) and match_status in ('unmatched', 'partial')`;
  const [d] = await tx`select coalesce(sum(debit_minor), 0)::bigint as total from bank_statement_debits where tenant_id = ${p.tenantId} and statement_id = ${statementId} and not duplicate`;
  const credits = Number(c!.total);
  const debits = Number(d!.total);
  const account = bankAccount(bank);
  if (credits) await postEntry(tx, { tenantId: p.tenantId, livemode: p.livemode, kind: 'bank.unidentified_deposits', refType: 'bank_statement', refId: statementId, memo: 'bank statement credits not matched to a charge', lines: [{ account, currency: 'MXN', amountMinor: credits }, { account: accounts.bankSuspense, currency: 'MXN', amountMinor: -credits }] });
  if (debits) await postEntry(tx, { tenantId: p.tenantId, livemode: p.livemode, kind: 'bank.debits', refType: 'bank_statement', refId: statementId, memo: 'bank statement debits (commissions, transfers out)', lines: [{ account: accounts.bankSuspense, currency: 'MXN', amountMinor: debits }, { account, currency: 'MXN', amountMinor: -debits }] });
}

/** A line's identity across exports of the same movements: its fields and its occurrence among equal ones. */
export function fingerprints(lines: { valueDate: string; description: string; reference: string | null; creditMinor: number; debitMinor: number }[]): string[] {
  const seen = new Map<string, number>();
  return lines.map((l) => {
    const key = `${l.valueDate}|${l.creditMinor}|${l.debitMinor}|${l.description.trim().replace(/\s+/g, ' ').toUpperCase()}|${(l.reference ?? '').trim().toUpperCase()}`;
    const k = (seen.get(key) ?? 0) + 1;
    seen.set(key, k);
    return createHash('sha256').update(`${key}|${k}`).digest('hex').slice(0, 32);
  });
}

/**
 * The book's locks in the order a charge's transaction takes them: the ledger's (shared, as every
 * posting does; migration 0050) then reconciliation's (exclusive here). The same order everywhere
 * means a period close waiting between them cannot make a cycle. Then the book's pending summaries
 * are written (migration 0180), so that the matching finds every charge committed before it in
 * cash_facts by its indexes (the matching reads the table, not cash_facts_now).
 */
export const lockBook = (tx: Db, p: Scope) =>
  Promise.all([
    tx`select pg_advisory_xact_lock_shared(orq_book_lock_key(${p.tenantId}, ${p.livemode})), pg_advisory_xact_lock(orq_bank_recon_lock_key(${p.tenantId}, ${p.livemode}))`,
    summarizeBook(tx, p.tenantId, p.livemode),
  ]);

/** POST /v1/bank_statements: 201 with the new statement, or 200 with the stored one (`already_imported`). */
export async function importStatement(deps: { sql: Sql }, p: Scope, input: ImportInput): Promise<{ status: number; body: ReturnType<typeof statementView> }> {
  const params = importParams(input.fields);
  if (input.bytes.length > MAX_STATEMENT_BYTES) {
    throw new ApiError('bank_statement.too_large', `The statement file is ${input.bytes.length} bytes; the limit is ${MAX_STATEMENT_BYTES} (5 MiB). Split the period into smaller statements.`);
  }
  const sha = createHash('sha256').update(input.bytes).digest('hex');
  const sql = deps.sql;
  const existing = async () => {
    const [r] = await sql`select id from bank_statements where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and file_sha256 = ${sha}`;
    return r ? { status: 200, body: await readStatement(sql, p, r.id as string, true) } : undefined;
  };
  const before = await existing();
  if (before) return before;
  let parsed: ParsedStatement;
  try {
    parsed = parseStatement(input.bytes, params.mapping, params.hasHeader);
  } catch (e) {
    if (e instanceof StatementParseError) throw new ApiError('bank_statement.parse_error', e.message);
    throw e;
  }
  const credits = parsed.lines.filter((l) => l.creditMinor > 0);
  const id = randomUUID();
  const mappingDoc = {
    ...(params.mapping.kind === 'preset' ? { preset: params.mapping.preset, reference_column: params.mapping.reference ?? null } : { columns: params.mapping }),
    has_header: params.hasHeader,
    header_row: parsed.headerRow,
    delimiter: parsed.delimiter,
    encoding: parsed.encoding,
  };
  try {
    await sql.begin(async (tx) => {
      await lockBook(tx, p);
      await tx`
        insert into bank_statements (id, tenant_id, livemode, bank, period_start, period_end, tolerance_days, preset, mapping, filename, file_sha256, file_bytes, lines_total, debit_rows)
        values (${id}, ${p.tenantId}, ${p.livemode}, ${params.bank}, ${params.periodStart}, ${params.periodEnd}, ${params.toleranceDays},
                ${params.mapping.kind === 'preset' ? params.mapping.preset : null}, ${sql.json(mappingDoc as never)}, ${input.filename ?? null}, ${sha}, ${input.bytes.length},
                ${credits.length}, ${parsed.lines.length - credits.length})`;
      // Bulk insert in slices (one statement per 10,000 lines: six arrays as parameters).
      // Line-level deduplication: the same movements exported again (another file hash) are not new
      // money. The fingerprints already held for this bank are read once (index lookups by value),
      // and the repeated lines are inserted as `duplicate` (no update afterwards).
      const fps = fingerprints(parsed.lines);
      const fpOf = new Map(parsed.lines.map((l, i) => [l, fps[i]!]));
      const bankKey = bankAccount(params.bank);
      const creditFps = credits.map((l) => fpOf.get(l)!);
      const held = new Set<string>();
      for (let i = 0; i < creditFps.length; i += 10_000) {
        const rows = await tx`
          select fingerprint from bank_statement_lines
           where tenant_id = ${p.tenantId} and livemode = ${p.livemode} and bank_key = ${bankKey} and match_status <> 'duplicate'
             and fingerprint = any(${creditFps.slice(i, i + 10_000)}::text[])`;
        for (const r of rows) held.add(r.fingerprint as string);
      }
      for (let i = 0; i < credits.length; i += 10_000) {
        const part = credits.slice(i, i + 10_000);
        await tx`
          insert into bank_statement_lines (statement_id, tenant_id, livemode, row_number, value_date, description, reference, credit_minor, fingerprint, bank_key, match_status)
          select ${id}, ${p.tenantId}, ${p.livemode}, r, d, t, ref, c, fp, ${bankKey}, st
            from unnest(${part.map((l) => l.row)}::int[], ${part.map((l) => l.valueDate)}::date[], ${part.map((l) => l.description)}::text[],
                        ${part.map((l) => l.reference)}::text[], ${part.map((l) => String(l.creditMinor))}::bigint[], ${part.map((l) => fpOf.get(l)!)}::text[],
                        ${part.map((l) => (held.has(fpOf.get(l)!) ? 'duplicate' : 'unmatched'))}::text[]) as x(r, d, t, ref, c, fp, st)
           order by r`;
      }
      const debitLines = parsed.lines.filter((l) => l.creditMinor <= 0 && l.debitMinor > 0);
      for (let i = 0; i < debitLines.length; i += 10_000) {
        const part = debitLines.slice(i, i + 10_000);
        await tx`
          insert into bank_statement_debits (statement_id, tenant_id, livemode, row_number, value_date, description, reference, debit_minor, fingerprint)
          select ${id}, ${p.tenantId}, ${p.livemode}, r, d, t, ref, c, fp
            from unnest(${part.map((l) => l.row)}::int[], ${part.map((l) => l.valueDate)}::date[], ${part.map((l) => l.description)}::text[],
                        ${part.map((l) => l.reference)}::text[], ${part.map((l) => String(l.debitMinor))}::bigint[], ${part.map((l) => fpOf.get(l)!)}::text[]) as x(r, d, t, ref, c, fp)
           order by r`;
      }
      await tx`
        update bank_statement_debits d set duplicate = true
         where d.tenant_id = ${p.tenantId} and d.statement_id = ${id}
           and exists (select 1 from bank_statement_debits o join bank_statements s on s.id = o.statement_id and s.tenant_id = o.tenant_id
                        where o.tenant_id = ${p.tenantId} and o.livemode = ${p.livemode} and o.fingerprint = d.fingerprint and o.statement_id <> ${id}
                          and not o.duplicate and lower(s.bank) = lower(${params.bank}))`;
      await matchStatement(tx, p, id, params.toleranceDays, params.bank, 'import');
      await postUnidentified(tx, p, id, params.bank);
    });
  } catch (e) {
    // The same file imported concurrently: the other import won; answer its statement.
    if (isUniqueViolation(e, 'bank_statements_tenant_id_livemode_file_sha256_key')) {
      const won = await existing();
      if (won) return won;
    }
    throw e;
  }
  return { status: 201, body: await readStatement(sql, p, id) };
}

/** POST /v1/bank_statements/{id}/rematch: the import's matching again, over the statement's open lines. */
export async function rematchStatement(deps: { sql: Sql }, p: Scope, id: string) {
  const sql = deps.sql;
  const [s] = await sql`select * from bank_statements where id = ${id} and tenant_id = ${p.tenantId} and livemode = ${p.livemode}`;
  if (!s) throw new ApiError('bank_statement.not_found');
  await sql.begin(async (tx) => {
    await lockBook(tx, p);
    await matchStatement(tx, p, id, Number(s.tolerance_days), s.bank as string, 'rematch');
  });
  return readStatement(sql, p, id);
}

const bookDay = (d: Date) => new Intl.DateTimeFormat('en-CA', { timeZone: BOOK_TZ, year: 'numeric', month: '2-digit', day: '2-digit' }).format(d);
const daysBetween = (a: string, b: string) => Math.abs(Date.parse(`${a}T00:00:00Z`) - Date.parse(`${b}T00:00:00Z`)) / 86_400_000;

/**
 * Late evidence: a SPEI charge succeeded; its open lines (imported before it succeeded) are matched
 * now, in the charge's transaction, with the same rule as the import. It holds the book's lock
 * shared (charges succeeding together do not wait for each other; an import or rematch holds it
 * exclusively, so one of the two always sees the other's commit) and locks the lines it reads.
 * Never fails the charge's step: every condition that could violate a constraint is checked first.
 */
export const bankStatementsCapability: Capability = {
  name: 'bank_statements',
  reactions: [
    {
      // The signal beside payment_intent.succeeded that names the attempt's method: a card (or
      // any other method) never reads here, only a SPEI charge does.
      on: SUCCEEDED_BY,
      run: async (e, { tx, sql, now }) => {
        if ((e.data as SucceededBy).method !== 'spei') return;
        const [a] = await tx`
          select a.id, a.provider_ref, a.connector_key, coalesce(a.fee_minor, 0) as fee_minor, pi.receipt_code, pi.amount_minor + pi.tip_minor as total_minor,
                 pg_advisory_xact_lock_shared(orq_bank_recon_lock_key(a.tenant_id, a.livemode)) as locked
            from attempts a join payment_intents pi on pi.id = a.payment_intent_id and pi.tenant_id = a.tenant_id
           where a.payment_intent_id = ${e.entityId} and a.tenant_id = ${e.tenantId} and a.livemode = ${e.livemode}
             and a.method = 'spei' and a.status in ('captured', 'settled')
           order by a.created_at desc limit 1`;
        if (!a) return;
        const refs = [a.provider_ref as string | null, a.receipt_code as string].filter((x): x is string => !!x);
        const lines = await tx`
          select l.id, l.credit_minor, l.value_date::text as value_date, l.match_status, l.currency, s.suspense_posted as in_suspense, s.tolerance_days, s.bank,
                 exists (select 1 from bank_statement_lines m where m.attempt_id = ${a.id as string} and m.tenant_id = ${e.tenantId} and m.match_status = 'matched') as charge_taken
            from bank_statement_lines l join bank_statements s on s.id = l.statement_id and s.tenant_id = l.tenant_id
           where l.tenant_id = ${e.tenantId} and l.livemode = ${e.livemode} and l.match_status not in ('matched', 'duplicate') and l.reference in ${sql(refs)}
           order by l.id
             for update of l`;
        if (!lines.length || lines[0].charge_taken) return;
        const chargeDay = bookDay(now);
        const total = Number(a.total_minor);
        const exact = lines.find((l) => Number(l.credit_minor) === total && daysBetween(l.value_date as string, chargeDay) <= Number(l.tolerance_days));
        if (exact) {
          const entryId = await postEntry(tx, {
            tenantId: e.tenantId,
            livemode: e.livemode,
            kind: 'bank.deposit',
            refType: 'payment_intent',
            refId: e.entityId,
            memo: `bank statement line ${String(exact.id)}`,
            lines: depositLines({ bank: exact.bank as string, inSuspense: exact.in_suspense as boolean, currency: exact.currency as string, amountMinor: total }, String(a.connector_key), Number(a.fee_minor)),
          });
          tx`
            update bank_statement_lines set match_status = 'matched', attempt_id = ${a.id as string}, payment_intent_id = ${e.entityId}, matched_at = now(),
                   matched_by = 'charge_succeeded', deposit_entry_id = ${entryId}, match_rule = 'reference'
             where id = ${exact.id as number}`;
          return;
        }
        const partial = lines.find((l) => l.match_status === 'unmatched' && Number(l.credit_minor) !== total);
        if (partial) {
          tx`
            update bank_statement_lines set match_status = 'partial', attempt_id = ${a.id as string}, payment_intent_id = ${e.entityId}, matched_at = now(), matched_by = 'charge_succeeded'
             where id = ${partial.id as number}`;
        }
      },
    },
  ],
};
