// Report windows. `from`/`to` are ISO 8601: a calendar date (YYYY-MM-DD) is that day in the
// books' time zone (America/Mexico_City, the zone of the accounting dates, migration 0050); a
// date-time is that instant (UTC when it carries no offset, as every timestamp of the API). Windows
// are half-open [from, to). Defaults are computed on the tenant's clock (test mode: the test clock).
import { ApiError } from '../../kernel/errors.js';
import { nowFor } from '../../kernel/clock.js';
import type { Db } from '../../kernel/db.js';
import type { Principal } from '../../kernel/principal.js';

export const BOOKS_TIME_ZONE = 'America/Mexico_City';

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|z|[+-]\d{2}:?\d{2})?$/;

const localFmt = new Intl.DateTimeFormat('en-CA', { timeZone: BOOKS_TIME_ZONE, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });

function wallClock(ms: number): { y: number; m: number; d: number; h: number; mi: number; s: number } {
  const parts = Object.fromEntries(localFmt.formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
  return { y: Number(parts.year), m: Number(parts.month), d: Number(parts.day), h: Number(parts.hour), mi: Number(parts.minute), s: Number(parts.second) };
}

/** The books' calendar date (YYYY-MM-DD) of an instant. */
export function localDate(at: Date): string {
  const w = wallClock(at.getTime());
  return `${String(w.y).padStart(4, '0')}-${String(w.m).padStart(2, '0')}-${String(w.d).padStart(2, '0')}`;
}

/** The instant a books' calendar date starts. */
export function startOfLocalDate(date: string): Date {
  const [, y, m, d] = DATE_RE.exec(date)!.map(Number);
  const target = Date.UTC(y, m - 1, d);
  let guess = target + 6 * 3600_000;
  for (let i = 0; i < 3; i++) {
    const w = wallClock(guess);
    const shown = Date.UTC(w.y, w.m - 1, w.d, w.h, w.mi, w.s);
    guess += target - shown;
  }
  return new Date(guess);
}

export const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
export const firstOfMonth = (date: string) => `${date.slice(0, 7)}-01`;
export function addMonths(date: string, n: number): string {
  const [y, m] = date.split('-').map(Number);
  const t = new Date(Date.UTC(y, m - 1 + n, 1));
  return t.toISOString().slice(0, 10);
}

function validDate(y: number, m: number, d: number): boolean {
  const t = new Date(Date.UTC(y, m - 1, d));
  return y >= 1970 && y <= 9999 && t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

export interface Bound {
  /** The instant. */
  at: Date;
  /** The books' calendar date the bound falls in (for ledger reports). */
  date: string;
  /** Whether it was given as a calendar date. */
  isDate: boolean;
}

/** Parses one bound, or throws reports.invalid_period naming the parameter. */
export function parseBound(name: 'from' | 'to', v: string): Bound {
  const dm = DATE_RE.exec(v);
  if (dm) {
    if (!validDate(+dm[1], +dm[2], +dm[3])) throw new ApiError('reports.invalid_period', `\`${name}\` ${JSON.stringify(v)} is not a calendar date.`);
    return { at: startOfLocalDate(v), date: v, isDate: true };
  }
  const tm = DATETIME_RE.exec(v);
  if (tm && validDate(+tm[1], +tm[2], +tm[3]) && +tm[4] < 24 && +tm[5] < 60 && +(tm[6] ?? 0) < 60) {
    const iso = tm[7] ? v : `${v}Z`;
    const ms = Date.parse(iso.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
    if (Number.isFinite(ms)) return { at: new Date(ms), date: localDate(new Date(ms)), isDate: false };
  }
  throw new ApiError('reports.invalid_period', `\`${name}\` ${JSON.stringify(v)} is not ISO 8601: use a date (2026-03-01, a day of the books in America/Mexico_City) or a date-time (2026-03-01T06:00:00Z).`);
}

export interface Window {
  from: Bound;
  to: Bound;
}

function ordered(w: Window): Window {
  if (w.from.at.getTime() >= w.to.at.getTime()) {
    throw new ApiError('reports.invalid_period', `\`from\` (${w.from.at.toISOString()}) must be before \`to\` (${w.to.at.toISOString()}); the window is [from, to).`);
  }
  return w;
}

/** Both bounds required (cash cut). */
export function requiredWindow(q: { from?: string; to?: string }): Window {
  if (q.from === undefined || q.to === undefined) throw new ApiError('reports.invalid_period', `\`${q.from === undefined ? 'from' : 'to'}\` is required: the cash cut covers [from, to).`);
  return ordered({ from: parseBound('from', q.from), to: parseBound('to', q.to) });
}

/** Optional bounds; a missing one comes from the default window ending at the tenant's now. */
export async function instantWindow(db: Db, p: Principal, q: { from?: string; to?: string }, defaultDays: number): Promise<Window> {
  const to = q.to !== undefined ? parseBound('to', q.to) : await nowBound(db, p);
  const from = q.from !== undefined ? parseBound('from', q.from) : (() => {
    const at = new Date(to.at.getTime() - defaultDays * 86_400_000);
    return { at, date: localDate(at), isDate: false };
  })();
  return ordered({ from, to });
}

async function nowBound(db: Db, p: Principal): Promise<Bound> {
  const at = await nowFor(db, p.tenantId, p.livemode);
  return { at, date: localDate(at), isDate: false };
}

/**
 * A window of whole days of the books, for ledger reports: [fromDate, toDate). A date-time bound
 * is taken as the day it falls in (`to` rounds up to the next day unless it is a day's start).
 * Default: the tenant's current month.
 */
export async function dayWindow(db: Db, p: Principal, q: { from?: string; to?: string }): Promise<{ from: string; to: string }> {
  let from: string | undefined;
  let to: string | undefined;
  if (q.from !== undefined) from = parseBound('from', q.from).date;
  if (q.to !== undefined) {
    const b = parseBound('to', q.to);
    to = b.isDate || startOfLocalDate(b.date).getTime() === b.at.getTime() ? b.date : addDays(b.date, 1);
  }
  if (from === undefined || to === undefined) {
    const today = localDate(await nowFor(db, p.tenantId, p.livemode));
    if (from === undefined && to === undefined) {
      from = firstOfMonth(today);
      to = addMonths(from, 1);
    } else if (from === undefined) from = firstOfMonth(addDays(to!, -1));
    else to = addMonths(firstOfMonth(from), 1) > from ? addMonths(firstOfMonth(from), 1) : addDays(from, 1);
  }
  if (from! >= to!) throw new ApiError('reports.invalid_period', `\`from\` (${from}) must be before \`to\` (${to}); the window is [from, to) in days of the books (America/Mexico_City).`);
  return { from: from!, to: to! };
}
