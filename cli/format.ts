// Plain-text output: key/value tables, column tables, amounts, and the error block. No colours
// when stdout is not a terminal (or NO_COLOR is set), so pasted sessions and pipes stay clean.
import * as util from 'node:util';
import { ApiError } from './api.js';
import { CliError } from './exit-codes.js';

type Style = 'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'cyan';

function colorOn(stream: NodeJS.WriteStream): boolean {
  if (process.env.NO_COLOR || process.env.TERM === 'dumb') return false;
  if (process.env.FORCE_COLOR) return true;
  return Boolean(stream.isTTY);
}

// util.styleText exists from Node 20.12; a named import would fail to link on older 20.x, which print plain text.
const styleText = (util as { styleText?: (s: Style, t: string) => string }).styleText;

export function paint(style: Style, text: string, stream: NodeJS.WriteStream = process.stdout): string {
  if (!colorOn(stream) || typeof styleText !== 'function') return text;
  return styleText(style, text);
}

export function money(minor: number | undefined, currency: string | undefined): string {
  if (typeof minor !== 'number') return '-';
  const major = (minor / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  return `${major} ${currency ?? ''}`.trim();
}

/** Rows of [label, value]; empty values are left out. */
export function keyValues(rows: Array<[string, string | undefined]>, indent = ''): string {
  const shown = rows.filter(([, v]) => v !== undefined && v !== '');
  const w = Math.max(...shown.map(([k]) => k.length));
  return shown.map(([k, v]) => `${indent}${k.padEnd(w)}  ${v}`).join('\n');
}

export function columns(header: string[], rows: string[][], indent = ''): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    indent +
    cells
      .map((c, i) => (i === cells.length - 1 ? c : (c ?? '').padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** The error block on stderr: API errors with code, message, doc_url and request id. */
export function formatError(e: unknown): string {
  if (e instanceof ApiError) {
    const er = e.error;
    const lines = [
      `${paint('red', 'error:', process.stderr)} ${er.code} (HTTP ${e.status}${er.type ? `, ${er.type}` : ''})`,
      `  ${er.message}`,
      er.doc_url ? `  Docs:       ${er.doc_url}` : '',
      er.request_id ? `  Request id: ${er.request_id}` : '',
    ];
    return lines.filter(Boolean).join('\n');
  }
  if (e instanceof CliError) return `${paint('red', 'error:', process.stderr)} ${e.message}${e.hint ? `\n  ${e.hint}` : ''}`;
  const err = e as Error;
  return `${paint('red', 'error:', process.stderr)} unexpected: ${err?.stack ?? String(e)}`;
}
