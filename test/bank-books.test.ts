// Issue 27, defect 8: the bank side of the books. A matched SPEI deposit clears the charge's
// receivable to zero (the fee the capture netted is owed to the connector); debit lines and unmatched
// deposits are posted to suspense, so after importing a statement the bank account's ledger balance
// is the statement's closing balance; matching by a reference inside the concept (BBVA's
// "SPEI RECIBIDO… PAGO FACTURA W-XXXXX"), by amount and date as `partial`; re-exporting the same
// movements (LF instead of CRLF) imports nothing twice.
import t from 'tap';
import { startTestApp, type TestApp, until } from './helpers/app.js';

let a: TestApp;
const idem = () => ({ 'idempotency-key': crypto.randomUUID() });
const today = () => new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Mexico_City', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
const shift = (d: string, n: number) => new Date(Date.parse(`${d}T12:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

t.before(async () => {
  a = await startTestApp({ ROLE: 'all', RATE_LIMIT_V1_PER_MIN: '100000' });
});
t.teardown(() => a.stop());

async function speiCharge(ten: { id: string; testKey: string }, amount: number) {
  const key = ten.testKey;
  const pi = await a.call('POST', '/v1/payment_intents', { key, headers: idem(), body: { amount_minor: amount, currency: 'MXN' } });
  await a.call('POST', `/v1/payment_intents/${pi.body.id}/confirm`, { key, headers: idem(), body: { payment_token: 'spei', payment_method: 'spei' } });
  const w = (await until(() => a.call('GET', `/v1/payment_intents/${pi.body.id}?expand=attempts`, { key }), (r) => r.body.status === 'requires_action')).body;
  await a.admin('POST', `/admin/tenants/${ten.id}/simulate-inbound`, { provider_ref: w.attempts[0].provider_ref });
  await until(() => a.call('GET', `/v1/payment_intents/${pi.body.id}`, { key }), (r) => r.body.status === 'succeeded');
  return { id: pi.body.id as string, ref: w.attempts[0].provider_ref as string, receipt: w.receipt_code as string, refNum: w.next_action?.referencia_numerica as number };
}

t.test('fees cleared, suspense, bank balance = statement closing balance, concept and amount+date matching, re-export', async (t) => {
  const ten = await a.newTenant('Banco');
  const key = ten.testKey;
  const c1 = await speiCharge(ten, 116000);
  const c2 = await speiCharge(ten, 50000);
  const c3 = await speiCharge(ten, 33300);
  const d = today();
  const rows = [
    `${d},SPEI RECIBIDO,${c1.ref},1160.00,`,
    `${d},SPEI RECIBIDOSANTANDER / 1234567 PAGO FACTURA ${c2.receipt},,500.00,`,
    `${d},DEPOSITO SPEI,,333.00,`,
    `${d},DEPOSITO DESCONOCIDO,,777.77,`,
    `${d},COMISION SPEI,,,15.00`,
    `${d},IVA COMISION SPEI,,,2.40`,
  ];
  const csv = (eol: string) => `Fecha,Concepto,Referencia,Abono,Cargo${eol}${rows.join(eol)}${eol}`;
  const fields = `bank=BBVA%200123&period_start=${shift(d, -3)}&period_end=${shift(d, 3)}&date_column=0&description_column=1&reference_column=2&credit_column=3&debit_column=4`;
  const upload = async (body: string) => {
    const r = await fetch(`${a.url}/v1/bank_statements?${fields}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' }, body });
    const text = await r.text();
    return { status: r.status, text, body: JSON.parse(text) };
  };
  const imp = await upload(csv('\r\n'));
  t.equal(imp.status, 201, imp.text);
  t.match(imp.body, { lines_total: 4, matched: 2, partial: 1, unmatched: 1, debit_rows: 2, duplicates: 0 });
  const lines = (await a.call('GET', `/v1/bank_statements/${imp.body.id}/lines`, { key })).body.data as any[];
  t.match(lines[0], { match_status: 'matched', payment_intent_id: c1.id, match_rule: 'clave_rastreo' });
  t.match(lines[1], { match_status: 'matched', payment_intent_id: c2.id, match_rule: 'concept' }, 'the receipt code inside BBVA\'s concept');
  t.match(lines[2], { match_status: 'partial', payment_intent_id: c3.id, match_rule: 'amount_date' }, 'only amount and date agree: partial');
  t.match(lines[3], { match_status: 'unmatched' });

  const balance = async (account: string) => {
    const [r] = await a.app.deps.sql`select coalesce(sum(amount_minor), 0)::bigint as b from journal_lines where tenant_id = ${ten.id} and livemode = false and account = ${account}`;
    return Number(r!.b);
  };
  const closing = 116000 + 50000 + 33300 + 77777 - 1500 - 240;
  t.equal(await balance('bank:bbva_0123'), closing, 'the bank account\'s ledger balance is the statement\'s closing balance');
  t.equal(await balance('bank_suspense'), -(33300 + 77777) + 1500 + 240, 'unidentified deposits and the debits wait in suspense');
  // c1 and c2 are reconciled: what the connector owed for them is zero (c3 is only partial)
  const [fees] = await a.app.deps.sql`select coalesce(sum(fee_minor), 0)::bigint as f from attempts where payment_intent_id in (${c1.id}, ${c2.id}) and status in ('captured', 'settled')`;
  const [rec] = await a.app.deps.sql`
    select coalesce(sum(l.amount_minor), 0)::bigint as b from journal_lines l join journal_entries e on e.id = l.entry_id
     where e.tenant_id = ${ten.id} and l.account like 'connector_receivable:%'
       and ((e.ref_type = 'attempt' and e.ref_id in (select id from attempts where payment_intent_id in (${c1.id}, ${c2.id}))) or (e.ref_type = 'payment_intent' and e.ref_id in (${c1.id}, ${c2.id})))`;
  t.equal(Number(rec!.b), 0, 'a reconciled charge\'s receivable ends at zero (fee cleared)');
  t.equal(await balance('connector_fees_payable:sim') + Number(fees!.f), 0, 'the fee the bank did not net is owed to the connector');

  // The same movements exported again with LF line ends: another file, nothing new
  const again = await upload(csv('\n'));
  t.equal(again.status, 201, 'another file (another hash)');
  t.match(again.body, { matched: 0, partial: 0, unmatched: 0, duplicates: 6 });
  t.equal(await balance('bank:bbva_0123'), closing, 'nothing posted twice');
});

// Issue 27, defect 8 (rest): SPEI instructions carry a referencia numérica (SPEI's referenciaNumerica,
// ≤ 7 digits: ../shared/formats/stp.md §2 field 28) that names the payment, and a bank line showing only
// that number matches the charge when amount and date agree.
t.test('a BBVA or Santander line with only the referencia numérica of the SPEI instructions matches its charge', async (t) => {
  const ten = await a.newTenant('Referencia numerica');
  const key = ten.testKey;
  const c1 = await speiCharge(ten, 150000);
  const c2 = await speiCharge(ten, 123450);
  const c3 = await speiCharge(ten, 70000);
  for (const c of [c1, c2, c3]) t.match(String(c.refNum), /^[1-9]\d{6}$/, 'next_action.referencia_numerica: 7 digits');
  t.equal(new Set([c1.refNum, c2.refNum, c3.refNum]).size, 3, 'one per SPEI instruction');
  const d = today();
  const [y, m, dd] = d.split('-');
  const upload = async (body: string, fields: string) => {
    const r = await fetch(`${a.url}/v1/bank_statements?period_start=${shift(d, -3)}&period_end=${shift(d, 3)}&${fields}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' }, body });
    const text = await r.text();
    return { status: r.status, text, body: JSON.parse(text) };
  };
  const lines = async (id: string) => (await a.call('GET', `/v1/bank_statements/${id}/lines`, { key })).body.data as any[];
  // BBVA "movimientos": the payer's bank writes SPEI RECIBIDO<BANCO>/<referencia> <concepto>; BBVA pads it to 10 digits
  const bbva = await upload(
    `Día\tConcepto / Referencia\tcargo\tAbono\tSaldo\r\n${dd}-${m}-${y}\tSPEI RECIBIDOSANTANDER/000${c1.refNum} PAGO FACTURA\t\t1,500.00\t11,500.00\r\n${dd}-${m}-${y}\tSPEI RECIBIDOBANORTE/${c3.refNum} ANTICIPO\t\t699.00\t12,199.00\r\n`,
    'bank=BBVA&preset=bbva',
  );
  t.equal(bbva.status, 201, bbva.text);
  const bl = await lines(bbva.body.id);
  t.match(bl[0], { match_status: 'matched', payment_intent_id: c1.id, match_rule: 'referencia_numerica' }, 'BBVA: the referencia numérica (zero-padded) after the "/"');
  t.match(bl[1], { match_status: 'partial', payment_intent_id: c3.id, match_rule: 'referencia_numerica' }, 'the right number and another amount: partial');
  // Santander CSV: no reference (all zeros), the number only in the Concepto
  const sant = await upload(
    `Cuenta,Fecha,Hora,Sucursal,Descripcion,Cargo/Abono,Importe,Saldo,Referencia,Concepto\r\n'65501234567,'${dd}${m}${y},10:15,'0001,ABONO TRANSFERENCIA SPEI,+,"1,234.50","11,234.50",'0000000,PAGO ${c2.refNum}\r\n`,
    'bank=Santander&preset=santander',
  );
  t.equal(sant.status, 201, sant.text);
  t.match((await lines(sant.body.id))[0], { match_status: 'matched', payment_intent_id: c2.id, match_rule: 'referencia_numerica', reference: undefined }, 'Santander: the number inside the concept');
});
