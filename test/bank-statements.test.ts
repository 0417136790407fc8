// Bank statements against the running service: every bank_statement.* code, multipart and raw
// imports, the presets on fixture files in the banks' layouts (Windows-1252, BOM, `;`, title lines),
// the 5 MiB boundary (refused while streaming), file-hash idempotency, a failed import storing
// nothing, and matching to real SPEI charges paid with the operator simulation: matched, partial and
// unmatched lines, the deposit entry, the three-way view with the CFDI, late evidence, listings.
import t from 'tap';
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../ops/paths.js';
import { startTestApp, type TestApp, until } from './helpers/app.js';
import { activity, type Charge } from './helpers/activity.js';

let a: TestApp;
let ten: Awaited<ReturnType<TestApp['newTenant']>>;
const fixture = (name: string) => readFileSync(join(projectRoot, 'test', 'fixtures', 'bank-statements', name));
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });

interface Answer {
  status: number;
  body: any;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

/** A request with a Buffer body (the helpers send strings; statements may be Windows-1252 bytes). */
function send(method: string, path: string, body: Buffer | undefined, headers: Record<string, string>, key = ten.testKey): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(a.url + path, { method, headers: { authorization: `Bearer ${key}`, connection: 'close', ...headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode!, body: parsed, text, headers: res.headers });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const qs = (fields: Record<string, string | number | boolean | undefined>) =>
  Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join('&');

/** Raw import: the file as the body, the fields in the query. */
const rawImport = (file: Buffer | string, fields: Record<string, string | number | boolean | undefined>, key?: string) =>
  send('POST', `/v1/bank_statements?${qs(fields)}`, Buffer.isBuffer(file) ? file : Buffer.from(file), { 'content-type': 'text/csv' }, key);

/** Multipart import: a `file` part and the fields as form fields. */
function multipartImport(file: Buffer | string, filename: string, fields: Record<string, string | number | boolean | undefined>, key?: string) {
  const boundary = `----orq${crypto.randomUUID().replace(/-/g, '')}`;
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${String(v)}\r\n`));
  }
  parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: text/csv\r\n\r\n`));
  parts.push(Buffer.isBuffer(file) ? file : Buffer.from(file));
  parts.push(Buffer.from(`\r\n--${boundary}--\r\n`));
  return send('POST', '/v1/bank_statements', Buffer.concat(parts), { 'content-type': `multipart/form-data; boundary=${boundary}` }, key);
}

const JAN = { bank: 'BBVA 0123', period_start: '2026-01-01', period_end: '2026-01-31' };
const COLS = { date_column: 0, description_column: 1, reference_column: 2, credit_column: 3, debit_column: 4 };
/** A small valid generic file; `salt` makes its bytes (hence its hash) unique. */
const generic = (salt: string, rows = ['2026-01-02,Transferencia,REF1,100.00,']) => `Fecha,Concepto,Referencia,Abono,Cargo (${salt})\n${rows.join('\n')}\n`;

const db = () => a.app.deps.sql;
const countStatements = async () => Number((await db()`select count(*) as n from bank_statements where tenant_id = ${ten.id}`)[0].n);
const countLines = async () => Number((await db()`select count(*) as n from bank_statement_lines where tenant_id = ${ten.id}`)[0].n);

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000', SWEEP_INTERVAL_MS: '200', RECONCILE_INTERVAL_MS: '500' });
  ten = await a.newTenant('Distribuidora del Bajío');
});
t.teardown(() => a.stop());

t.test('every validation code, in the spec\'s order, and nothing stored', async (t) => {
  const file = generic('codes');
  const cases: Array<[Record<string, string | number | undefined>, string, RegExp?]> = [
    [{ ...COLS, period_start: '2026-01-01', period_end: '2026-01-31' }, 'bank_statement.bank_required', /bank/],
    [{ ...COLS, bank: '   ', period_start: '2026-01-01', period_end: '2026-01-31' }, 'bank_statement.bank_required'],
    [{ ...COLS, bank: 'X', period_end: '2026-01-31' }, 'bank_statement.invalid_period', /period_start/],
    [{ ...COLS, bank: 'X', period_start: '2026-01-01' }, 'bank_statement.invalid_period', /period_end/],
    [{ ...COLS, bank: 'X', period_start: '01/01/2026', period_end: '2026-01-31' }, 'bank_statement.invalid_period'],
    [{ ...COLS, bank: 'X', period_start: '2026-02-30', period_end: '2026-03-31' }, 'bank_statement.invalid_period'],
    [{ ...COLS, bank: 'X', period_start: '2026-02-01', period_end: '2026-01-31' }, 'bank_statement.invalid_period', /inverted/],
    [{ ...COLS, ...JAN, tolerance_days: -1 }, 'bank_statement.invalid_tolerance'],
    [{ ...COLS, ...JAN, tolerance_days: 'two' }, 'bank_statement.invalid_tolerance'],
    [{ ...JAN, preset: 'hsbc' }, 'bank_statement.unknown_preset', /bbva, banorte, santander/],
    [{ ...JAN }, 'bank_statement.mapping_required', /date_column/],
    [{ ...JAN, date_column: 0, description_column: 1, credit_column: 3 }, 'bank_statement.mapping_required', /debit_column/],
    [{ ...JAN, ...COLS, credit_column: -1 }, 'bank_statement.invalid_mapping'],
    [{ ...JAN, ...COLS, credit_column: 'x' }, 'bank_statement.invalid_mapping'],
    [{ ...JAN, ...COLS, debit_column: 3 }, 'bank_statement.invalid_mapping', /same number/],
    [{ ...JAN, ...COLS, reference_column: 0 }, 'bank_statement.invalid_mapping', /same number/],
    [{ ...JAN, ...COLS, has_header: 'yes' }, 'bank_statement.invalid_mapping', /has_header/],
  ];
  for (const [fields, code, msg] of cases) {
    const r = await rawImport(file, fields);
    t.equal(r.status, 400, `${code} ${JSON.stringify(fields)}`);
    t.equal(r.body?.error?.code, code, r.text);
    t.equal(r.body?.error?.type, 'invalid_request_error');
    if (msg) t.match(r.body.error.message, msg);
  }
  // the same codes through multipart form fields
  const m = await multipartImport(file, 'x.csv', { ...JAN, preset: 'nope' });
  t.equal(m.body.error.code, 'bank_statement.unknown_preset');
  const lines = await a.call('GET', `/v1/bank_statements/${crypto.randomUUID()}/lines?match_status=pending`, { key: ten.testKey });
  t.equal(lines.status, 400);
  t.equal(lines.body.error.code, 'bank_statement.invalid_match_status');
  t.equal(await countStatements(), 0, 'nothing stored');
});

t.test('parse_error names the row and the reason; a failed import stores nothing', async (t) => {
  const header = 'Fecha,Concepto,Referencia,Abono,Cargo';
  const cases: Array<[string[], RegExp]> = [
    [['2026-01-02,ok,,100.00,', '2026-13-02,bad date,,100.00,'], /^Row 3: invalid date "2026-13-02"/],
    [['31/02/2026,no such day,,100.00,'], /^Row 2: invalid date "31\/02\/2026"/],
    [['2026-01-02,ok,,100.00,', '2026-01-03,ok,,1.00,', '2026-01-04,bad amount,,12a.00,'], /^Row 4: invalid amount "12a.00" in the credit column/],
    [['2026-01-02,bad debit,,,1.234'], /^Row 2: invalid amount "1.234" in the debit column/],
    [['2026-01-02,both,,100.00,50.00'], /^Row 2: both a credit \(100.00\) and a debit \(50.00\)/],
    [['2026-01-02,neither,,,'], /^Row 2: neither a credit nor a debit/],
    [['2026-01-02,zeros,,0.00,0'], /^Row 2: neither a credit nor a debit/],
    [['2026-01-02,short'], /^Row 2: it has 2 columns/],
  ];
  for (const [rows, msg] of cases) {
    const r = await rawImport(`${header}\n${rows.join('\n')}\n`, { ...JAN, ...COLS });
    t.equal(r.status, 400, rows.join(' | '));
    t.equal(r.body.error.code, 'bank_statement.parse_error');
    t.match(r.body.error.message, msg);
  }
  const empty = await rawImport('', { ...JAN, ...COLS });
  t.equal(empty.body.error.code, 'bank_statement.parse_error');
  t.match(empty.body.error.message, /empty/);
  // decisions §7: a statement whose period has no movements (the export's header alone) imports, with lines_total 0.
  const onlyHeader = await rawImport(`${header}\n`, { ...JAN, ...COLS });
  t.equal(onlyHeader.status, 201, 'a header-only statement is an empty statement');
  t.match(onlyHeader.body, { object: 'bank_statement', lines_total: 0, matched: 0, partial: 0, unmatched: 0 });
  t.same((await a.call('GET', `/v1/bank_statements/${onlyHeader.body.id}/lines`, { key: ten.testKey })).body.data, [], 'with no lines');
  await db()`delete from bank_statements where id = ${onlyHeader.body.id}`; // the test's last check: nothing else was stored
  const wrongLayout = await rawImport(fixture('santander-movimientos.csv'), { ...JAN, preset: 'bbva' });
  t.equal(wrongLayout.body.error.code, 'bank_statement.parse_error');
  t.match(wrongLayout.body.error.message, /header row of the bbva layout/);
  const noFile = await multipartImport('', 'x.csv', JAN).then(async () =>
    send('POST', '/v1/bank_statements', Buffer.from('--b\r\nContent-Disposition: form-data; name="bank"\r\n\r\nX\r\n--b--\r\n'), { 'content-type': 'multipart/form-data; boundary=b' }),
  );
  t.equal(noFile.body.error.code, 'bank_statement.parse_error');
  t.match(noFile.body.error.message, /no `file` part/);
  t.equal(await countStatements(), 0, 'no statement stored');
  t.equal(await countLines(), 0, 'no line stored');
});

t.test('presets on files in the banks\' layouts: BBVA (tab, Windows-1252), Banorte (BOM, $, -), Santander (sign column, apostrophes)', async (t) => {
  const bbva = await multipartImport(fixture('bbva-movimientos.txt'), 'movimientos.txt', { ...JAN, preset: 'bbva' });
  t.equal(bbva.status, 201, bbva.text);
  t.match(bbva.body, { object: 'bank_statement', bank: 'BBVA 0123', period_start: '2026-01-01', period_end: '2026-01-31', filename: 'movimientos.txt', preset: 'bbva', lines_total: 3, debit_rows: 1, matched: 0, partial: 0, unmatched: 3, already_imported: false, livemode: false });
  const bl = await a.call('GET', `/v1/bank_statements/${bbva.body.id}/lines`, { key: ten.testKey });
  t.same(
    bl.body.data.map((l: any) => [l.row_number, l.value_date, l.description, l.reference, l.credit_minor, l.currency, l.match_status]),
    [
      [2, '2026-01-02', 'SPEI RECIBIDOSANTANDER PAGO FACTURA 88', '0071234567', 150000, 'MXN', 'unmatched'],
      [4, '2026-01-05', 'DEPÓSITO EN EFECTIVO SUCURSAL ÑUÑOA', undefined, 35050, 'MXN', 'unmatched'],
      [5, '2026-01-07', 'SPEI RECIBIDOBANORTE 4455', 'REF', 1200000, 'MXN', 'unmatched'],
    ],
    'Windows-1252 decoded (Ó, Ñ); reference = first word after the first `/`; the debit row not stored',
  );
  const banorte = await rawImport(fixture('banorte-movimientos.csv'), { ...JAN, bank: 'Banorte', preset: 'banorte', filename: 'banorte.csv' });
  t.equal(banorte.status, 201, banorte.text);
  t.match(banorte.body, { lines_total: 2, debit_rows: 1, filename: 'banorte.csv' });
  const nl = await a.call('GET', `/v1/bank_statements/${banorte.body.id}/lines`, { key: ten.testKey });
  t.same(
    nl.body.data.map((l: any) => [l.value_date, l.reference, l.credit_minor]),
    [
      ['2026-01-02', '0001234', 120000],
      ['2026-01-22', 'W-ABCDE', 348000],
    ],
    'BOM dropped, "$1,200.00" and "$ 3,480.00" read, "-" is empty, 22/ene./2026 read',
  );
  t.match(nl.body.data[0].description, /^SPEI RECIBIDO \| CUENTA: 012180001234567891/);
  const sant = await rawImport(fixture('santander-movimientos.csv'), { ...JAN, bank: 'Santander', preset: 'santander' });
  t.equal(sant.status, 201, sant.text);
  const sl = await a.call('GET', `/v1/bank_statements/${sant.body.id}/lines`, { key: ten.testKey });
  t.same(
    sl.body.data.map((l: any) => [l.value_date, l.reference, l.credit_minor, l.description]),
    [
      ['2026-01-02', '7654321', 123450, 'ABONO TRANSFERENCIA SPEI | PAGO PEDIDO 77'],
      ['2026-01-04', undefined, 9990, 'ABONO TRANSFERENCIA SPEI | SIN REFERENCIA'],
    ],
    "'02012026 read, + credit / - debit, an all-zeros reference is none",
  );
  const gen = await rawImport(fixture('generic-semicolon.csv'), { ...JAN, bank: 'Otro', ...COLS });
  t.equal(gen.status, 201, gen.text);
  t.match(gen.body, { lines_total: 1, debit_rows: 1 }, '`;` delimiter, title lines before the header skipped');
  const noHeader = await rawImport('02/01/2026;Sin encabezado;W-12345;$1,234.50;\n', { ...JAN, bank: 'Otro', ...COLS, has_header: false });
  t.equal(noHeader.status, 201, noHeader.text);
  const nh = await a.call('GET', `/v1/bank_statements/${noHeader.body.id}/lines`, { key: ten.testKey });
  t.match(nh.body.data[0], { value_date: '2026-01-02', reference: 'W-12345', credit_minor: 123450 });
});

t.test('the file hash is the idempotency: same bytes answer already_imported, no duplicate lines', async (t) => {
  const file = generic('idem', ['2026-01-02,uno,R1,10.00,', '2026-01-03,dos,R2,20.00,']);
  const first = await rawImport(file, { ...JAN, ...COLS });
  t.equal(first.status, 201);
  t.equal(first.body.already_imported, false);
  const linesBefore = await countLines();
  const again = await multipartImport(file, 'otra-vez.csv', { ...JAN, bank: 'Otro nombre', ...COLS, tolerance_days: 9 });
  t.equal(again.status, 200, again.text);
  t.equal(again.body.id, first.body.id, 'the same statement');
  t.equal(again.body.already_imported, true);
  t.equal(again.body.bank, 'BBVA 0123', 'as first imported');
  t.equal(await countLines(), linesBefore, 'no duplicate lines');
  const read = await a.call('GET', `/v1/bank_statements/${first.body.id}`, { key: ten.testKey });
  t.equal(read.body.already_imported, false, 'a read is not an import');
  // concurrent imports of one new file: one statement
  const file2 = generic('race', ['2026-01-05,tres,R3,30.00,']);
  const rs = await Promise.all(Array.from({ length: 4 }, () => rawImport(file2, { ...JAN, ...COLS })));
  t.same(new Set(rs.map((r) => r.body.id)).size, 1, 'one statement');
  t.same(rs.map((r) => r.status).sort(), [200, 200, 200, 201]);
  // another mode does not see it
  const live = await rawImport(file2, { ...JAN, ...COLS }, ten.liveKey);
  t.equal(live.status, 201, 'live mode has its own statements');
  t.not(live.body.id, rs[0].body.id);
});

t.test('5 MiB: a file of exactly 5 MiB is read, one byte more is too_large; a huge body is refused while streaming', async (t) => {
  const MiB5 = 5 * 1024 * 1024;
  const row = '2026-01-02,Transferencia,REF,1.00,\n';
  const header = 'Fecha,Concepto,Referencia,Abono,Cargo\n';
  const n = Math.floor((MiB5 - header.length) / row.length);
  let body = header + row.repeat(n);
  body += ' '.repeat(MiB5 - Buffer.byteLength(body) - 1) + '\n';
  t.equal(Buffer.byteLength(body), MiB5);
  const ok = await rawImport(body, { ...JAN, ...COLS });
  t.equal(ok.status, 201, ok.text.slice(0, 300));
  t.equal(ok.body.lines_total, n);
  const over = await rawImport(body + 'x', { ...JAN, ...COLS });
  t.equal(over.status, 400);
  t.equal(over.body.error.code, 'bank_statement.too_large');
  const overMultipart = await multipartImport(body + 'x', 'big.csv', { ...JAN, ...COLS });
  t.equal(overMultipart.body.error.code, 'bank_statement.too_large', 'the file part over 5 MiB');
  // a declared 40 MiB body: refused before it is read
  const huge = await send('POST', `/v1/bank_statements?${qs({ ...JAN, ...COLS })}`, Buffer.alloc(40 * 1024 * 1024, 0x41), { 'content-type': 'text/csv' }).catch((e: Error) => e);
  if (!(huge instanceof Error)) {
    t.equal(huge.status, 400);
    t.equal(huge.body.error.code, 'bank_statement.too_large');
  } else t.pass(`the connection was closed while sending (${huge.message})`);
  // a body streamed in chunks without Content-Length (chunked): refused once past the cap, memory not grown
  const rss0 = process.memoryUsage().rss;
  const chunked = await new Promise<Answer>((resolve, reject) => {
    const req = request(`${a.url}/v1/bank_statements?${qs({ ...JAN, ...COLS })}`, { method: 'POST', headers: { authorization: `Bearer ${ten.testKey}`, 'content-type': 'text/csv', connection: 'close' }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString()), text: '', headers: res.headers }));
    });
    req.on('error', reject);
    const chunk = Buffer.alloc(256 * 1024, 0x42);
    let sent = 0;
    const pump = () => {
      while (sent < 12 * 1024 * 1024) {
        sent += chunk.length;
        if (!req.write(chunk)) return req.once('drain', pump);
      }
      req.end();
    };
    pump();
  }).catch((e: Error) => e);
  if (!(chunked instanceof Error)) t.equal(chunked.body.error.code, 'bank_statement.too_large', 'chunked body past the cap');
  else t.pass(`closed while sending (${chunked.message})`);
  t.ok(process.memoryUsage().rss - rss0 < 200 * 1024 * 1024, 'the API process did not keep the refused bodies');
  const live = await a.call('GET', '/health/live');
  t.equal(live.status, 200, 'still serving');
});

// ---------------------------------------------------------------------------------------------
// Matching to real SPEI charges

const today = () => new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Mexico_City' }).format(new Date());
const shift = (d: string, days: number) => new Date(Date.parse(`${d}T12:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
/** A Banorte CSV (its real column order) with the given movements. */
function banorteFile(rows: Array<{ date: string; ref: string; credit?: number; debit?: number; desc?: string }>, salt = crypto.randomUUID()) {
  const money = (m?: number) => (m === undefined ? '-' : `"$${(m / 100).toLocaleString('en-US', { minimumFractionDigits: 2 })}"`);
  const [y, mo, d] = ['', '', ''];
  void y, mo, d;
  const lines = rows.map((r, i) => {
    const [yy, mm, dd] = r.date.split('-');
    return `${dd}/${mm}/${yy},${r.ref},${r.desc ?? 'SPEI RECIBIDO'},5001,0123,${money(r.credit)},${money(r.debit)},"$0.00",${i + 1},CONCEPTO: ${salt}`;
  });
  return '\ufeffFECHA,REFERENCIA,DESCRIPCIÓN,COD. TRANSAC,SUCURSAL,DEPÓSITOS,RETIROS,SALDO,MOVIMIENTO,DESCRIPCIÓN DETALLADA\r\n' + lines.join('\r\n') + '\r\n';
}

t.test('matching: matched, partial and unmatched lines from real SPEI charges; the deposit entry; the three-way view with the CFDI; re-import posts nothing twice', async (t) => {
  const tn = await a.newTenant('Reconciliación SA');
  const key = tn.testKey;
  const act = activity(a, key);
  const fp = await a.call('PUT', '/v1/fiscal_profile', { key, body: { rfc: 'AAA010101AAA', nombre: 'ACCEM SERVICIOS EMPRESARIALES SC', regimen_fiscal: '601', cp: '06600', serie: 'F', pac_provider: 'sim' } });
  t.equal(fp.status, 200, fp.text);
  const [c1, c2, c3, c5, c6]: Charge[] = [await act.spei(tn.id, 11600), await act.spei(tn.id, 25000), await act.spei(tn.id, 5000), await act.spei(tn.id, 7700), await act.spei(tn.id, 8800)];
  const card = await act.card(11600);
  const inv = await a.call('POST', '/v1/invoices', { key, headers: idem(), body: { payment_intent_id: c1.intent.id, receptor: { rfc: 'EKU9003173C9', nombre: 'Escuela Kemper Urgate', uso_cfdi: 'G03', regimen_fiscal: '601', cp: '26015' } } });
  t.equal(inv.status, 201, inv.text);
  const d = today();
  const period = { bank: 'Banorte 4455', period_start: shift(d, -10), period_end: shift(d, 10), preset: 'banorte', tolerance_days: 2 };
  const file = banorteFile([
    { date: d, ref: c1.attempt.provider_ref, credit: 11600 }, // matched by provider_ref
    { date: shift(d, 1), ref: c2.intent.receipt_code, credit: 24000 }, // partial: receipt_code, amount differs
    { date: d, ref: 'NO-SUCH-REF', credit: 5000 }, // nothing identifies it; amount and date agree with c3 only: partial (issue 27)
    { date: shift(d, -5), ref: c5.intent.receipt_code, credit: 7700 }, // right reference and amount, outside tolerance: unmatched
    { date: d, ref: card.attempt.provider_ref ?? 'x', credit: 11600 }, // a card charge is not a SPEI charge
    { date: d, ref: c1.attempt.provider_ref, credit: 11600 }, // the same charge again: one charge matches one line
    { date: d, ref: 'PAGO-PROVEEDOR', debit: 3000 },
    { date: shift(d, -2), ref: c6.attempt.provider_ref, credit: 8800 }, // exactly tolerance_days away: matched
  ]);
  const imp = await rawImport(file, period, key);
  t.equal(imp.status, 201, imp.text);
  t.match(imp.body, { lines_total: 7, debit_rows: 1, matched: 2, partial: 2, unmatched: 3 });
  // exceptions = partial lines + SPEI charges of the period no line matched (c2, c3, c5)
  t.equal(imp.body.charges_without_line, 3);
  t.equal(imp.body.exceptions, 5);
  const lines = (await a.call('GET', `/v1/bank_statements/${imp.body.id}/lines`, { key })).body.data;
  t.same(lines.map((l: any) => l.match_status), ['matched', 'partial', 'partial', 'unmatched', 'unmatched', 'unmatched', 'matched']);
  t.match(lines[2], { payment_intent_id: c3.intent.id, match_rule: 'amount_date' }, 'amount and date only: partial, never matched');
  t.equal(lines[6].payment_intent_id, c6.intent.id, 'the tolerance is inclusive');
  t.match(lines[0], { payment_intent_id: c1.intent.id, attempt_id: c1.attempt.id, matched_by: 'import' });
  t.match(lines[1], { payment_intent_id: c2.intent.id, match_status: 'partial' });
  t.equal(lines[3].payment_intent_id, undefined);
  // the deposit entry: bank debited, the rail's clearing account credited net of the fee the capture
  // netted (the receivable ends at zero), the fee owed to the connector (issue 27, defect 8), once
  const [{ fee_minor: fee1 }] = await db()`select coalesce(fee_minor, 0)::int as fee_minor from attempts where id = ${c1.attempt.id}`;
  const entries = await db()`
    select e.id, e.kind, e.ref_id, jl.account, jl.amount_minor from journal_entries e join journal_lines jl on jl.entry_id = e.id
     where e.tenant_id = ${tn.id} and e.kind = 'bank.deposit' and e.ref_id = ${c1.intent.id} order by jl.amount_minor desc`;
  t.same(entries.map((e) => [e.ref_id, e.account, e.amount_minor]), [
    [c1.intent.id, 'bank:banorte_4455', 11600],
    ...(fee1 ? [[c1.intent.id, `connector_fees_payable:${c1.attempt.connector_key}`, -fee1]] : []),
    [c1.intent.id, `connector_receivable:${c1.attempt.connector_key}`, -(11600 - fee1)],
  ].sort((x, y) => Number(y[2]) - Number(x[2])));
  const daily = await db()`select coalesce(sum(debit_minor), 0)::int as d, coalesce(sum(credit_minor), 0)::int as c from ledger_daily_now where tenant_id = ${tn.id} and account = 'bank:banorte_4455'`;
  t.equal(daily[0].d, 11600 + 8800 + 24000 + 5000 + 7700 + 11600 + 11600, 'the ledger summaries (migration 0050 trigger) include the deposits, identified or in suspense');
  t.equal(daily[0].c, 3000, 'and the debit row');
  // the three-way view
  const rec = await a.call('GET', `/v1/bank_statements/${imp.body.id}/reconciliation`, { key });
  t.equal(rec.status, 200, rec.text);
  t.equal(rec.body.object, 'bank_reconciliation');
  const first = rec.body.lines.data[0];
  t.match(first, {
    line: { match_status: 'matched' },
    charge: { payment_intent_id: c1.intent.id, amount_minor: 11600, provider_ref: c1.attempt.provider_ref, receipt_code: c1.intent.receipt_code, status: 'succeeded' },
    ledger: { bank_deposit_entry_id: entries[0].id },
    invoice: { id: inv.body.id, uuid_fiscal: inv.body.uuid_fiscal, status: 'stamped' },
  });
  t.ok(first.ledger.capture_entry_id, 'the capture entry of the charge');
  t.match(rec.body.lines.data[1], { line: { match_status: 'partial' }, charge: { payment_intent_id: c2.intent.id, amount_minor: 25000 } });
  t.equal(rec.body.lines.data[1].ledger.bank_deposit_entry_id, undefined, 'a partial line posts nothing');
  t.match(rec.body.lines.data[2], { line: { match_status: 'partial', match_rule: 'amount_date' }, charge: { payment_intent_id: c3.intent.id } });
  t.equal(rec.body.lines.data[3].charge, undefined);
  t.same(rec.body.charges_without_line.map((c: any) => c.payment_intent_id).sort(), [c2.intent.id, c3.intent.id, c5.intent.id].sort());
  // filters and pages
  const partial = await a.call('GET', `/v1/bank_statements/${imp.body.id}/lines?match_status=partial`, { key });
  t.same(partial.body.data.map((l: any) => l.id), [lines[1].id, lines[2].id]);
  const p1 = await a.call('GET', `/v1/bank_statements/${imp.body.id}/lines?match_status=unmatched&limit=2`, { key });
  t.equal(p1.body.data.length, 2);
  t.equal(p1.body.has_more, true);
  const p2 = await a.call('GET', `/v1/bank_statements/${imp.body.id}/lines?match_status=unmatched&limit=2&cursor=${p1.body.next_cursor}`, { key });
  t.same(p2.body.data.map((l: any) => l.id), [lines[5].id]);
  t.equal(p2.body.has_more, false);
  t.equal(p2.body.next_cursor, undefined);
  const bad = await a.call('GET', `/v1/bank_statements/${imp.body.id}/lines?cursor=zzz`, { key });
  t.equal(bad.body.error.code, 'bank_statement.invalid_cursor');
  // a second statement cannot take c1 again; re-import posts nothing twice
  const other = await rawImport(banorteFile([{ date: d, ref: c1.attempt.provider_ref, credit: 11600 }]), period, key);
  t.match(other.body, { matched: 0, unmatched: 1 }, 'one charge matches at most one line, across statements');
  const again = await rawImport(file, period, key);
  t.match(again.body, { id: imp.body.id, already_imported: true, matched: 2 });
  const n = await db()`select count(*)::int as n from journal_entries where tenant_id = ${tn.id} and kind = 'bank.deposit'`;
  t.equal(n[0].n, 2, 'one deposit entry per matched charge, none from the re-import');
  // rematch changes nothing here (idempotent)
  const rm = await a.call('POST', `/v1/bank_statements/${imp.body.id}/rematch`, { key });
  t.match(rm.body, { matched: 2, partial: 2, unmatched: 3 });
  // listing, tenancy
  const list = await a.call('GET', '/v1/bank_statements', { key });
  t.same(list.body.data.map((s: any) => s.id), [other.body.id, imp.body.id]);
  const foreign = await a.call('GET', `/v1/bank_statements/${imp.body.id}`, { key: ten.testKey });
  t.equal(foreign.status, 404);
  t.equal(foreign.body.error.code, 'bank_statement.not_found');
  const liveRead = await a.call('GET', `/v1/bank_statements/${imp.body.id}/lines`, { key: tn.liveKey });
  t.equal(liveRead.body.error.code, 'bank_statement.not_found');
  const malformed = await a.call('GET', '/v1/bank_statements/not-a-uuid/reconciliation', { key });
  t.equal(malformed.body.error.code, 'bank_statement.not_found');
});

t.test('late evidence: a line imported before its charge succeeds is matched when the charge succeeds', async (t) => {
  const tn = await a.newTenant('Evidencia Tardía');
  const key = tn.testKey;
  const pi = await a.call('POST', '/v1/payment_intents', { key, headers: idem(), body: { amount_minor: 43210, currency: 'MXN' } });
  await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key, headers: idem(), body: { payment_token: 'spei', payment_method: 'spei' } });
  const waiting = (await until(() => a.call('GET', `/v1/payment_intents/${pi.body.id}?expand=attempts`, { key }), (r) => r.body.status === 'requires_action')).body;
  const ref = waiting.attempts[0].provider_ref as string;
  const pi2 = await a.call('POST', '/v1/payment_intents', { key, headers: idem(), body: { amount_minor: 1000, currency: 'MXN' } });
  await a.call('POST', `/v1/payment_intents/${pi2.body.id}/confirm`, { key, headers: idem(), body: { payment_token: 'spei', payment_method: 'spei' } });
  const w2 = (await until(() => a.call('GET', `/v1/payment_intents/${pi2.body.id}?expand=attempts`, { key }), (r) => r.body.status === 'requires_action')).body;
  const d = today();
  const imp = await rawImport(
    banorteFile([
      { date: d, ref, credit: 43210 },
      { date: d, ref: w2.receipt_code, credit: 999 },
    ]),
    { bank: 'Banorte', period_start: shift(d, -3), period_end: shift(d, 3), preset: 'banorte' },
    key,
  );
  t.match(imp.body, { matched: 0, unmatched: 2 }, 'the charges have not succeeded yet');
  for (const [tid, r] of [[tn.id, ref], [tn.id, w2.attempts[0].provider_ref]]) {
    const sim = await a.admin('POST', `/admin/tenants/${tid}/simulate-inbound`, { provider_ref: r });
    t.equal(sim.status, 200);
  }
  const after = await until(() => a.call('GET', `/v1/bank_statements/${imp.body.id}`, { key }), (r) => r.body.matched === 1 && r.body.partial === 1, 15_000);
  t.match(after.body, { matched: 1, partial: 1, unmatched: 0, exceptions: 2, charges_without_line: 1 });
  const lines = (await a.call('GET', `/v1/bank_statements/${imp.body.id}/lines`, { key })).body.data;
  t.match(lines[0], { match_status: 'matched', payment_intent_id: pi.body.id, matched_by: 'charge_succeeded' });
  t.match(lines[1], { match_status: 'partial', payment_intent_id: pi2.body.id });
  const e = await db()`
    select jl.account, jl.amount_minor from journal_entries e join journal_lines jl on jl.entry_id = e.id
     where e.tenant_id = ${tn.id} and e.kind = 'bank.deposit' order by jl.amount_minor desc`;
  const [{ fee_minor: fee }] = await db()`select coalesce(fee_minor, 0)::int as fee_minor from attempts where id = ${waiting.attempts[0].id}`;
  // posted in the charge's transaction; the lines were in suspense since the import (issue 27)
  t.same(e.map((x) => [x.account, x.amount_minor]), [
    ['bank_suspense', 43210],
    ...(fee ? [['connector_fees_payable:sim', -fee]] : []),
    ['connector_receivable:sim', -(43210 - fee)],
  ].sort((x, y) => Number(y[1]) - Number(x[1])), 'posted in the charge\'s transaction');
});

t.test('charges succeeding while their statement is imported: each line matched once, one deposit entry per charge', async (t) => {
  const tn = await a.newTenant('Carrera');
  const key = tn.testKey;
  const d = today();
  const period = { bank: 'BBVA', period_start: shift(d, -3), period_end: shift(d, 3), preset: 'banorte' };
  // the tenant's first statement: nothing to find before it commits
  const pending = await Promise.all(
    Array.from({ length: 6 }, async (_, i) => {
      const pi = await a.call('POST', '/v1/payment_intents', { key, headers: idem(), body: { amount_minor: 2000 + i, currency: 'MXN' } });
      await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key, headers: idem(), body: { payment_token: 'spei', payment_method: 'spei' } });
      const w = (await until(() => a.call('GET', `/v1/payment_intents/${pi.body.id}?expand=attempts`, { key }), (r) => r.body.status === 'requires_action')).body;
      return { id: pi.body.id as string, ref: w.attempts[0].provider_ref as string, amount: 2000 + i };
    }),
  );
  const file = banorteFile(pending.map((p) => ({ date: d, ref: p.ref, credit: p.amount })));
  const [imp] = await Promise.all([
    rawImport(file, period, key),
    ...pending.map((p) => a.admin('POST', `/admin/tenants/${tn.id}/simulate-inbound`, { provider_ref: p.ref })),
  ]);
  t.equal(imp.status, 201, imp.text);
  for (const p of pending) await until(() => a.call('GET', `/v1/payment_intents/${p.id}`, { key }), (r) => r.body.status === 'succeeded');
  const s = await until(() => a.call('GET', `/v1/bank_statements/${imp.body.id}`, { key }), (r) => r.body.matched === 6, 15_000);
  t.match(s.body, { matched: 6, partial: 0, unmatched: 0, charges_without_line: 0 });
  const entries = await db()`select ref_id, count(*)::int as n from journal_entries where tenant_id = ${tn.id} and kind = 'bank.deposit' group by ref_id`;
  t.equal(entries.length, 6, 'one deposit entry per charge');
  t.ok(entries.every((e) => e.n === 1));
  const lines = (await a.call('GET', `/v1/bank_statements/${imp.body.id}/lines`, { key })).body.data;
  t.same(lines.map((l: any) => l.payment_intent_id).sort(), pending.map((p) => p.id).sort(), 'each line its own charge');
});

t.test('scopes: import needs payments:write, reads need reports:read', async (t) => {
  const k = await a.admin('POST', `/admin/tenants/${ten.id}/api_keys`, { livemode: false, scopes: ['reports:read'] });
  t.equal(k.status, 201, k.text);
  const imp = await rawImport(generic('scope'), { ...JAN, ...COLS }, k.body.key);
  t.equal(imp.status, 403);
  t.equal(imp.body.error.code, 'insufficient_scope');
  t.match(imp.body.error.message, /payments:write/);
  const list = await a.call('GET', '/v1/bank_statements', { key: k.body.key });
  t.equal(list.status, 200);
  t.ok(list.body.data.length > 0);
  const w = await a.admin('POST', `/admin/tenants/${ten.id}/api_keys`, { livemode: false, scopes: ['payments:write'] });
  const read = await a.call('GET', '/v1/bank_statements', { key: w.body.key });
  t.equal(read.status, 403);
  t.match(read.body.error.message, /reports:read/);
});

t.test('hostile bytes: NUL and control characters in the file, the form fields and the file name are stored as text or refused, never a 500', async (t) => {
  const file = Buffer.concat([Buffer.from('Fecha,Concepto,Referencia,Abono,Cargo (nul)\n2026-01-02,Pago\u0000con nul,R\u0001X,5.00,\n'), Buffer.from([0x32, 0x30, 0x32, 0x36, 0x2d, 0x30, 0x31, 0x2d, 0x30, 0x33, 0x2c, 0x00, 0xff, 0x2c, 0x2c, 0x31, 0x2c, 0x0a])]);
  const r = await multipartImport(file, 'a\u0000b.csv', { ...JAN, bank: 'Banco\u0000X', ...COLS });
  t.equal(r.status, 201, r.text);
  t.equal(r.body.bank, 'BancoX');
  t.equal(r.body.filename, 'ab.csv');
  const lines = (await a.call('GET', `/v1/bank_statements/${r.body.id}/lines`, { key: ten.testKey })).body.data;
  t.equal(lines[0].description, 'Pago con nul');
  t.equal(lines[0].reference, 'R X');
  t.equal(lines[1].description, 'ÿ', 'not UTF-8: read as Windows-1252');
  const q = await send('POST', `/v1/bank_statements?${qs({ ...JAN, ...COLS })}&bank=a%00b`, Buffer.from(generic('nulq')), { 'content-type': 'text/csv' });
  t.equal(q.status, 400);
  t.equal(q.body.error.code, 'request.invalid_query');
  const junk = await send('POST', '/v1/bank_statements', Buffer.from('garbage'), { 'content-type': 'multipart/form-data; boundary=zz' });
  t.equal(junk.status, 400);
  t.equal(junk.body.error.code, 'bank_statement.parse_error');
});
