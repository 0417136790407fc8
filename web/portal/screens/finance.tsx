// Invoicing, receivables, reconciliation, accounting reports, payouts, sub-merchants and services.
// Every money-moving or document action says what will happen before it happens.
import { useState } from 'preact/hooks';
import { api, download } from '../api.js';
import { go, store, useStore } from '../state.js';
import { Bars, Card, Dl, Empty, Field, Form, Json, L, Loading, Status, Table, day, money, toMinor, useFields, useLoad, when } from '../ui.js';
import type { ViewProps } from './index.js';

const firstOfMonth = () => `${day(new Date().toISOString()).slice(0, 7)}-01`;
const tomorrow = () => day(new Date(Date.now() + 86_400_000).toISOString());

export function Invoices(_p: ViewProps) {
  const [kind, setKind] = useState('');
  const [period, setPeriod] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const qs = new URLSearchParams({ limit: '25', ...(kind ? { kind } : {}), ...(period ? { period } : {}), ...(cursors.length ? { cursor: cursors[cursors.length - 1] } : {}) });
  const list = useLoad(() => api<{ data: any[]; has_more: boolean; next_cursor?: string }>('GET', `/v1/invoices?${qs}`), [qs.toString()]);
  const [one, setOne] = useState<any>(null);
  const f = useFields({ id: '' });
  const act = async (doc: any, what: 'cancel' | 'credit' | 'rep') => {
    // A cancellation names the CFDI itself (a credit note or REP is cancelled before its invoice, SAT's order);
    // a credit note or REP is asked on the invoice.
    const id = what === 'cancel' ? doc.id : (doc.invoice_id ?? doc.id);
    if (what === 'cancel') {
      const motivo = prompt(L('Motivo SAT de cancelación (01, 02, 03 o 04):', 'SAT cancellation reason (01, 02, 03 or 04):'), '02');
      if (!motivo) return;
      // Motive 01 (errors, with a relation) names the CFDI that replaces this one.
      const folio = motivo.trim() === '01' ? prompt(L('UUID del CFDI que sustituye a este:', 'UUID of the CFDI that replaces this one:'))?.trim() : undefined;
      if (motivo.trim() === '01' && !folio) return;
      if (!confirm(L(`Se pedirá al SAT cancelar el CFDI ${doc.uuid_fiscal}. ¿Continuar?`, `The SAT will be asked to cancel CFDI ${doc.uuid_fiscal}. Continue?`))) return;
      await api('POST', `/v1/invoices/${id}/cancel`, { motivo: motivo.trim(), ...(folio ? { folio_sustitucion: folio } : {}) });
    } else if (what === 'credit') {
      const amount = toMinor(prompt(L('Monto de la nota de crédito en pesos, IVA incluido:', 'Credit note amount in pesos, VAT included:')) ?? '');
      if (amount === undefined) return;
      if (!confirm(L(`Se timbrará una nota de crédito por ${money(amount, doc.currency)} relacionada con ${doc.uuid_fiscal}. ¿Continuar?`, `A credit note for ${money(amount, doc.currency)} related to ${doc.uuid_fiscal} will be stamped. Continue?`))) return;
      await api('POST', `/v1/invoices/${id}/credit-notes`, { total_minor: amount });
    } else {
      // A payment complement records a succeeded charge that pays (part of) a PPD invoice.
      const ref = prompt(L('Código de recibo (W-XXXXX) o id del pago que liquida la factura:', 'Receipt code (W-XXXXX) or id of the payment that settles the invoice:'))?.trim();
      if (!ref) return;
      let pid = ref;
      if (!/^[0-9a-f-]{36}$/i.test(ref)) {
        const found = await api<{ data: any[] }>('GET', `/v1/payment_intents?receipt_code=${encodeURIComponent(ref)}&limit=1`);
        if (!found.data.length) throw new Error(L(`Ningún pago tiene el código ${ref}.`, `No payment has the code ${ref}.`));
        pid = found.data[0].id;
      }
      await api('POST', `/v1/invoices/${id}/payments`, { payment_intent_id: pid });
    }
    store.trigger.notify({ kind: 'ok', text: L('Hecho.', 'Done.') });
    list.reload();
  };
  const run = (doc: any, what: 'cancel' | 'credit' | 'rep') => act(doc, what).catch((e) => store.trigger.notify({ kind: 'error', text: (e as Error).message }));
  const KIND: Record<string, [string, string]> = { invoice: ['Factura', 'Invoice'], global: ['Global', 'Global'], payment: ['REP', 'Payment complement'], credit_note: ['Nota de crédito', 'Credit note'] };
  const rows = one ? [one] : list.data?.data ?? [];
  return (
    <>
      <h1>{L('Facturas', 'Invoices')}</h1>
      <div class="filters">
        <Field label={L('Tipo', 'Kind')} name="inv-kind" value={kind} onInput={(v) => { setCursors([]); setOne(null); setKind(v); }}
          options={[['', L('Todos', 'All')], ['invoice', L('Facturas', 'Invoices')], ['payment', L('Complementos de pago', 'Payment complements')], ['credit_note', L('Notas de crédito', 'Credit notes')], ['global', L('Globales', 'Global')]]} />
        <div class="field"><label for="inv-period">{L('Mes (AAAA-MM)', 'Month (YYYY-MM)')}</label><input id="inv-period" type="month" value={period} onChange={(e) => { setCursors([]); setOne(null); setPeriod((e.target as HTMLInputElement).value); }} /></div>
      </div>
      <Card title={L('Abrir por id', 'Open by id')}>
        <Form testid="invoice-find" submit={L('Abrir', 'Open')} onSubmit={async () => setOne(await api('GET', `/v1/invoices/${f.id.trim()}`))}>
          <Field label={L('Id de la factura', 'Invoice id')} name="invoice-id" onInput={(v) => (f.id = v)} testid="invoice-id" />
        </Form>
      </Card>
      <Loading state={list} />
      {rows.length ? (
        <Table testid="invoices" rows={rows} cols={[
          { label: L('Tipo', 'Kind'), get: (i) => L(...(KIND[i.kind ?? 'invoice'] ?? [i.kind, i.kind])) },
          { label: L('Folio', 'Number'), get: (i) => `${i.serie ?? ''}${i.folio ?? ''}` || i.id.slice(0, 8) },
          { label: L('Receptor', 'Customer'), get: (i) => i.receptor_nombre ?? i.receptor?.nombre ?? i.receptor_rfc ?? '—' },
          { label: 'Total', get: (i) => money(i.total_minor, i.currency), cls: 'num' },
          { label: L('Estado', 'Status'), get: (i) => <Status s={i.status} /> },
          { label: 'UUID', get: (i) => <code>{i.uuid_fiscal ?? '—'}</code> },
          { label: '', get: (i) => (
            <span class="row">
              <button type="button" class="btn small" data-testid="invoice-xml" onClick={() => download(`/v1/invoices/${i.id}/xml`, `${i.uuid_fiscal ?? i.id}.xml`, 'application/xml')}>XML</button>
              <button type="button" class="btn small" data-testid="invoice-pdf" onClick={() => download(`/v1/invoices/${i.id}/pdf`, `${i.uuid_fiscal ?? i.id}.pdf`, 'application/pdf')}>PDF</button>
              {(i.kind ?? 'invoice') === 'invoice' && i.status === 'stamped' ? (
                <>
                  {i.metodo_pago === 'PPD' ? <button type="button" class="btn small" onClick={() => run(i, 'rep')}>REP</button> : null}
                  <button type="button" class="btn small" onClick={() => run(i, 'credit')}>{L('Nota de crédito', 'Credit note')}</button>
                  <button type="button" class="btn small danger" onClick={() => run(i, 'cancel')}>{L('Cancelar', 'Cancel')}</button>
                </>
              ) : (i.kind === 'credit_note' || i.kind === 'payment') && i.status === 'stamped' ? (
                <button type="button" class="btn small danger" onClick={() => run(i, 'cancel')}>{L('Cancelar', 'Cancel')}</button>
              ) : null}
            </span>
          ) },
        ]} />
      ) : list.data ? <Empty what={L('Sin facturas.', 'No invoices.')} curl={`curl -s ${location.origin}/v1/invoices -H "Authorization: Bearer sk_test_…" -H "Idempotency-Key: $(uuidgen)" -H 'Content-Type: application/json' -d '{"payment_intent_id":"…","receptor":{"rfc":"XAXX010101000","nombre":"PUBLICO EN GENERAL","uso_cfdi":"S01","regimen_fiscal":"616","cp":"06600"}}'`} /> : null}
      {!one ? (
        <div class="row pager">
          {cursors.length ? <button type="button" class="btn" onClick={() => setCursors(cursors.slice(0, -1))}>{L('Anterior', 'Previous')}</button> : null}
          {list.data?.has_more && list.data.next_cursor ? <button type="button" class="btn" onClick={() => setCursors([...cursors, list.data!.next_cursor!])}>{L('Siguiente', 'Next')}</button> : null}
        </div>
      ) : null}
    </>
  );
}

export function Receivables(_p: ViewProps) {
  const list = useLoad(() => api<{ data: any[] }>('GET', '/v1/receivables?limit=50'));
  const ageing = useLoad(() => api<{ data: any[] }>('GET', '/v1/receivables/ageing'));
  const [stmt, setStmt] = useState<any>(null);
  // A customer's statement (every receivable, open, overdue and paid totals), from either table.
  const openStatement = (r: any) =>
    api('GET', `/v1/receivables/statement?customer_email=${encodeURIComponent(r.customer_email)}&currency=${r.currency}`).then(setStmt, (e) => store.trigger.notify({ kind: 'error', text: (e as Error).message }));
  const buckets = ['bucket0_to30_minor', 'bucket31_to60_minor', 'bucket61_to90_minor', 'bucket90_plus_minor'];
  const totals = buckets.map((b) => (ageing.data?.data ?? []).reduce((s, r) => s + (r[b] ?? 0), 0));
  return (
    <>
      <h1>{L('Cuentas por cobrar', 'Receivables')}</h1>
      <Card title={L('Antigüedad de saldos', 'Ageing')}>
        <Loading state={ageing} />
        {ageing.data?.data.length ? (
          <>
            <Bars title={L('Saldo vencido por antigüedad', 'Past due by age')} labels={['0–30', '31–60', '61–90', '90+']} series={[{ name: 'MXN', values: totals, color: '#b7791f' }]} />
            <Table testid="ageing" rows={ageing.data.data} onRow={openStatement} cols={[
              { label: L('Cliente', 'Customer'), get: (r) => `${r.customer_name} (${r.customer_email})` },
              { label: '0–30', get: (r) => money(r.bucket0_to30_minor, r.currency), cls: 'num' },
              { label: '31–60', get: (r) => money(r.bucket31_to60_minor, r.currency), cls: 'num' },
              { label: '61–90', get: (r) => money(r.bucket61_to90_minor, r.currency), cls: 'num' },
              { label: '90+', get: (r) => money(r.bucket90_plus_minor, r.currency), cls: 'num' },
              { label: 'Total', get: (r) => money(r.total_minor, r.currency), cls: 'num' },
            ]} />
          </>
        ) : <p class="muted">{L('Nada vencido.', 'Nothing past due.')}</p>}
      </Card>
      {stmt ? (
        <Card title={L(`Estado de cuenta de ${stmt.customer_name ?? stmt.customer_email}`, `Statement of ${stmt.customer_name ?? stmt.customer_email}`)}>
          <div data-testid="statement">
            <Dl items={[
              [L('Por vencer', 'Open'), money(stmt.total_open_minor, stmt.currency)],
              [L('Vencido', 'Overdue'), <strong data-testid="statement-overdue">{money(stmt.total_overdue_minor, stmt.currency)}</strong>],
              [L('Pagado', 'Paid'), money(stmt.total_paid_minor, stmt.currency)],
              [L('Al', 'As of'), when(stmt.as_of)],
            ]} />
            <Table rows={stmt.receivables} cols={[
              { label: L('Concepto', 'Concept'), get: (r) => r.concepto },
              { label: L('Monto', 'Amount'), get: (r) => money(r.amount_minor, r.currency), cls: 'num' },
              { label: L('Vence', 'Due'), get: (r) => day(r.due_date) },
              { label: L('Estado', 'Status'), get: (r) => <Status s={r.status} /> },
            ]} />
          </div>
        </Card>
      ) : null}
      <Loading state={list} />
      {list.data?.data.length ? (
        <Table testid="receivables" rows={list.data.data} onRow={openStatement} cols={[
          { label: L('Cliente', 'Customer'), get: (r) => `${r.customer_name} (${r.customer_email})` },
          { label: L('Concepto', 'Concept'), get: (r) => r.concepto },
          { label: L('Monto', 'Amount'), get: (r) => money(r.amount_minor, r.currency) },
          { label: L('Vence', 'Due'), get: (r) => day(r.due_date) },
          { label: L('Estado', 'Status'), get: (r) => <Status s={r.status} /> },
        ]} />
      ) : list.data ? <Empty what={L('Sin cuentas por cobrar.', 'No receivables.')} /> : null}
    </>
  );
}

export function Reconciliation(_p: ViewProps) {
  const list = useLoad(() => api<{ data: any[] }>('GET', '/v1/bank_statements?limit=50'));
  const [file, setFile] = useState<File | null>(null);
  const [preset, setPreset] = useState('bbva');
  // POST /v1/bank_statements needs the account's name and the statement's period besides the file.
  const [bank, setBank] = useState('');
  const [start, setStart] = useState(firstOfMonth());
  const [end, setEnd] = useState(day(new Date().toISOString()));
  return (
    <>
      <h1>{L('Estados de cuenta bancarios', 'Bank statements')}</h1>
      <Card title={L('Subir estado de cuenta', 'Upload a statement')}>
        <Form testid="statement-upload" submit={L('Subir y conciliar', 'Upload and reconcile')} onSubmit={async () => {
          if (!file) throw new Error(L('Elige el archivo del banco.', 'Choose the bank\'s file.'));
          const q = new URLSearchParams({ preset, bank, period_start: start, period_end: end });
          const r = await api<any>('POST', `/v1/bank_statements?${q}`, undefined, { raw: await file.arrayBuffer(), contentType: 'text/csv' });
          list.reload();
          go(`/reconciliation/${r.id}`);
          return L('Estado de cuenta importado.', 'Statement imported.');
        }}>
          <div class="field"><label for="st-file">{L('Archivo del banco (CSV o TXT)', 'Bank file (CSV or TXT)')}</label><input id="st-file" type="file" accept=".csv,.txt,text/csv,text/plain" data-testid="statement-file" onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)} /></div>
          <Field label={L('Formato del banco', 'Bank layout')} name="preset" value={preset} onInput={setPreset} options={[['bbva', 'BBVA'], ['banorte', 'Banorte'], ['santander', 'Santander']]} />
          <Field label={L('Cuenta (nombre con que la verás en la balanza)', 'Account (its name in the trial balance)')} name="statement-bank" required placeholder="BBVA 0123" value={bank} onInput={setBank} testid="statement-bank" />
          <div class="filters">
            <div class="field"><label for="st-start">{L('Periodo: desde', 'Period: from')}</label><input id="st-start" type="date" required value={start} onChange={(e) => setStart((e.target as HTMLInputElement).value)} /></div>
            <div class="field"><label for="st-end">{L('hasta (incluido)', 'to (included)')}</label><input id="st-end" type="date" required value={end} onChange={(e) => setEnd((e.target as HTMLInputElement).value)} /></div>
          </div>
        </Form>
      </Card>
      <Loading state={list} />
      {list.data?.data.length ? (
        <Table testid="statements" rows={list.data.data} onRow={(s) => go(`/reconciliation/${s.id}`)} cols={[
          { label: L('Banco', 'Bank'), get: (s) => s.bank },
          { label: L('Periodo', 'Period'), get: (s) => `${s.period_start} – ${s.period_end}` },
          { label: L('Líneas', 'Lines'), get: (s) => String(s.lines_total) },
          { label: L('Conciliadas', 'Matched'), get: (s) => String(s.matched) },
          { label: L('Subido', 'Uploaded'), get: (s) => when(s.created_at) },
        ]} />
      ) : list.data ? <Empty what={L('Sin estados de cuenta.', 'No statements.')} /> : null}
    </>
  );
}

export function StatementDetail({ id }: ViewProps) {
  const lines = useLoad(() => api<{ data: any[] }>('GET', `/v1/bank_statements/${id}/lines?limit=200`), [id]);
  const rec = useLoad(() => api<any>('GET', `/v1/bank_statements/${id}/reconciliation`), [id]);
  const match = async (line: any) => {
    const pi = prompt(L('Id o código de recibo (W-XXXXX) del pago SPEI que corresponde a esta línea:', 'Id or receipt code (W-XXXXX) of the SPEI payment this line is:'));
    if (!pi) return;
    const body = /^[0-9a-f-]{36}$/i.test(pi.trim()) ? { payment_intent_id: pi.trim() } : { receipt_code: pi.trim().toUpperCase() };
    try {
      await api('POST', `/v1/bank_statements/${id}/lines/${line.id}/match`, body);
      store.trigger.notify({ kind: 'ok', text: L('Línea conciliada a mano.', 'Line matched by hand.') });
    } catch (e) {
      store.trigger.notify({ kind: 'error', text: (e as Error).message });
    }
    lines.reload();
    rec.reload();
  };
  const unmatch = async (line: any) => {
    if (!confirm(L('Se deshace la conciliación y se revierte el asiento del depósito. ¿Continuar?', 'The match is undone and its deposit entry reversed. Continue?'))) return;
    try {
      await api('POST', `/v1/bank_statements/${id}/lines/${line.id}/unmatch`);
    } catch (e) {
      store.trigger.notify({ kind: 'error', text: (e as Error).message });
    }
    lines.reload();
    rec.reload();
  };
  return (
    <>
      <p><a href="#/reconciliation">← {L('Estados de cuenta', 'Bank statements')}</a></p>
      <h1>{L('Revisión de conciliación', 'Reconciliation review')}</h1>
      {rec.data?.statement ? (
        <Card>
          <Dl items={[
            [L('Banco', 'Bank'), rec.data.statement.bank],
            [L('Periodo', 'Period'), `${rec.data.statement.period_start} – ${rec.data.statement.period_end}`],
            [L('Conciliadas', 'Matched'), String(rec.data.statement.matched ?? '—')],
            [L('Parciales', 'Partial'), String(rec.data.statement.partial ?? '—')],
            [L('Sin conciliar', 'Unmatched'), String(rec.data.statement.unmatched ?? '—')],
            [L('Cobros SPEI sin línea', 'SPEI charges without a line'), String(rec.data.charges_without_line?.length ?? 0)],
          ]} />
        </Card>
      ) : null}
      <Loading state={lines} />
      {lines.data?.data.length ? (
        <Table testid="lines" rows={lines.data.data} cols={[
          { label: L('Fecha', 'Date'), get: (l) => l.value_date },
          { label: L('Descripción', 'Description'), get: (l) => l.description },
          { label: L('Referencia', 'Reference'), get: (l) => l.reference ?? '—' },
          { label: L('Abono', 'Credit'), get: (l) => money(l.credit_minor, l.currency), cls: 'num' },
          { label: L('Estado', 'Status'), get: (l) => <Status s={l.match_status} /> },
          { label: L('Pago', 'Payment'), get: (l) => (l.payment_intent_id ? <a href={`#/payments/${l.payment_intent_id}`}>{l.payment_intent_id.slice(0, 8)}…</a> : '—') },
          { label: '', get: (l) => l.match_status === 'unmatched'
            ? <button type="button" class="btn small" data-testid="match-line" onClick={() => match(l)}>{L('Conciliar a mano', 'Match by hand')}</button>
            : <button type="button" class="btn small danger" data-testid="unmatch-line" onClick={() => unmatch(l)}>{L('Deshacer', 'Unmatch')}</button> },
        ]} />
      ) : lines.data ? <Empty what={L('Sin líneas de abono.', 'No credit lines.')} /> : null}
    </>
  );
}

export function Reports(_p: ViewProps) {
  const [from, setFrom] = useState(firstOfMonth());
  const [to, setTo] = useState(tomorrow());
  const [fmt, setFmt] = useState('contpaqi');
  const range = `from=${from}&to=${to}`;
  const cut = useLoad(() => api<any>('GET', `/v1/reports/cash-cut?${range}`), [range]);
  const bal = useLoad(() => api<any>('GET', `/v1/reports/balanza?${range}`), [range]);
  const sav = useLoad(() => api<any>('GET', `/v1/reports/savings?${range}`), [range]);
  const leak = useLoad(() => api<any>('GET', `/v1/reports/fee-leakage?${range}`), [range]);
  const anom = useLoad(() => api<any>('GET', `/v1/reports/anomalies?${range}`), [range]);
  const byMethod: any[] = cut.data?.by_method ?? [];
  const byBranch: any[] = cut.data?.by_branch ?? [];
  return (
    <>
      <h1>{L('Reportes y pólizas', 'Reports and journals')}</h1>
      <div class="filters">
        <div class="field"><label for="r-from">{L('Desde', 'From')}</label><input id="r-from" type="date" value={from} onChange={(e) => setFrom((e.target as HTMLInputElement).value)} /></div>
        <div class="field"><label for="r-to">{L('Hasta (sin incluir)', 'Until (excluded)')}</label><input id="r-to" type="date" value={to} onChange={(e) => setTo((e.target as HTMLInputElement).value)} /></div>
      </div>
      <Card title={L('Pólizas contables', 'Journal entries')}>
        <div class="row">
          <Field label={L('Formato', 'Format')} name="polizas-format" value={fmt} onInput={setFmt} options={[['contpaqi', 'CONTPAQi'], ['aspel_coi', 'Aspel COI']]} />
          <button type="button" class="btn primary" data-testid="download-polizas" onClick={() => download(`/v1/reports/polizas?format=${fmt}&${range}`, `polizas-${fmt}-${from}.txt`).catch((e) => store.trigger.notify({ kind: 'error', text: e.message }))}>{L('Descargar pólizas', 'Download journals')}</button>
        </div>
      </Card>
      <Card title={L('Corte de caja', 'Cash cut')}>
        <Loading state={cut} />
        {cut.data ? (
          <>
            <Dl items={[
              [L('Cobrado (con propina)', 'Charged (with tips)'), <strong data-testid="cut-total">{money(cut.data.totals.total_minor, cut.data.currency)}</strong>],
              [L('Operaciones', 'Operations'), String(cut.data.totals.operation_count)],
              [L('Reembolsado', 'Refunded'), money(cut.data.refunds.amount_minor, cut.data.currency)],
              [L('Neto', 'Net'), money(cut.data.totals.total_minor - cut.data.refunds.amount_minor, cut.data.currency)],
            ]} />
            {byMethod.length ? <Bars title={L('Por método', 'By method')} labels={byMethod.map((b) => b.key)} series={[{ name: 'Total', values: byMethod.map((b) => b.total_minor), color: '#1f7a4d' }]} /> : null}
            {byBranch.length ? <Bars title={L('Por sucursal', 'By branch')} labels={byBranch.map((b) => b.key)} series={[{ name: 'Total', values: byBranch.map((b) => b.total_minor), color: '#2b6cb0' }]} /> : null}
          </>
        ) : null}
      </Card>
      <Card title={L('Balanza de comprobación', 'Trial balance')}>
        <Loading state={bal} />
        {bal.data?.accounts?.length ? (
          <Table testid="balanza" rows={bal.data.accounts} cols={[
            { label: L('Cuenta', 'Account'), get: (a) => `${a.code ?? ''} ${a.name ?? a.account}` },
            { label: L('Inicial', 'Opening'), get: (a) => money(a.opening_balance_minor), cls: 'num' },
            { label: L('Cargos', 'Debits'), get: (a) => money(a.debits_minor), cls: 'num' },
            { label: L('Abonos', 'Credits'), get: (a) => money(a.credits_minor), cls: 'num' },
            { label: L('Final', 'Closing'), get: (a) => money(a.closing_balance_minor), cls: 'num' },
          ]} />
        ) : bal.data ? <p class="muted">{L('Sin movimientos.', 'No movements.')}</p> : null}
      </Card>
      <Card title={L('Ahorro por ruteo y fugas de comisión', 'Routing savings and fee leakage')}>
        {sav.data && leak.data && ![sav.data.routing_saved_minor, sav.data.retry_recovered_minor, sav.data.dunning_recovered_minor, leak.data.leakage_minor].some((x: number) => x) ? (
          <p class="muted" data-testid="savings-none">{L('Sin ahorro ni fugas en el periodo.', 'No savings or leakage in the period.')}</p>
        ) : sav.data && leak.data ? (
          <Bars title={L('Ahorro y fugas', 'Savings and leakage')} labels={[L('Ruteo', 'Routing'), L('Reintentos', 'Retries'), L('Cobranza', 'Dunning'), L('Fuga', 'Leakage')]}
            series={[{ name: 'MXN', values: [sav.data.routing_saved_minor, sav.data.retry_recovered_minor, sav.data.dunning_recovered_minor, leak.data.leakage_minor], color: '#6b46c1' }]} />
        ) : <Loading state={sav} />}
      </Card>
      <Card title={L('Anomalías', 'Anomalies')}>
        <Loading state={anom} />
        {anom.data?.data?.length ? (
          <Table testid="anomalies" rows={anom.data.data} cols={[
            { label: L('Regla', 'Rule'), get: (a) => a.rule },
            { label: L('Fecha', 'Date'), get: (a) => a.day ?? (a.occurred_at ? when(a.occurred_at) : '—') },
            { label: L('Por qué', 'Why'), get: (a) => a.reason },
          ]} />
        ) : anom.data ? <p class="muted">{L('Sin anomalías.', 'No anomalies.')}</p> : null}
      </Card>
    </>
  );
}

export function Payouts({ session }: ViewProps) {
  const list = useLoad(() => api<{ data: any[] }>('GET', '/v1/payouts?limit=50'));
  const approvals = useLoad(() => api<{ data: any[] }>('GET', '/payout_approvals?status=pending'));
  const canDecide = ['*', 'payouts:write'].some((s) => session.member.scopes.includes(s));
  const decide = async (a: any, d: 'approve' | 'reject') => {
    if (d === 'approve' && !confirm(L(`Se enviarán ${money(a.amount_minor, a.currency)} por SPEI a ${a.beneficiary_name ?? ''} (${a.clabe_masked}). ¿Aprobar?`, `${money(a.amount_minor, a.currency)} will be sent by SPEI to ${a.beneficiary_name ?? ''} (${a.clabe_masked}). Approve?`))) return;
    try {
      await api('POST', `/payout_approvals/${a.id}/${d}`);
      store.trigger.notify({ kind: 'ok', text: d === 'approve' ? L('Aprobada: la transferencia se envía.', 'Approved: the payout is being sent.') : L('Rechazada.', 'Rejected.') });
    } catch (e) {
      store.trigger.notify({ kind: 'error', text: (e as Error).message });
    }
    approvals.reload();
    list.reload();
  };
  const v = useFields<Record<string, string>>({});
  return (
    <>
      <h1>{L('Transferencias', 'Payouts')}</h1>
      <Card title={L('Nueva transferencia SPEI', 'New SPEI payout')}>
        <Form testid="payout-form" danger submit={L('Enviar transferencia', 'Send payout')} onSubmit={async () => {
          const amount = toMinor(v.amount ?? '');
          if (amount === undefined) throw new Error(L('Monto no válido.', 'Invalid amount.'));
          if (!confirm(L(`Se enviarán ${money(amount)} por SPEI a la CLABE ${v.clabe} (${v.name}). ¿Continuar?`, `${money(amount)} will be sent by SPEI to CLABE ${v.clabe} (${v.name}). Continue?`))) return;
          const r = await api<any>('POST', '/v1/payouts', { clabe: v.clabe, beneficiary_name: v.name, amount_minor: amount, currency: 'MXN', concepto: v.concepto });
          list.reload();
          return r.object === 'payout_approval' ? L('Supera el umbral: otra persona debe aprobarla.', 'Above the threshold: another person must approve it.') : L('Transferencia enviada.', 'Payout sent.');
        }}>
          <Field label="CLABE" name="clabe" inputmode="numeric" required onInput={(x) => (v.clabe = x)} />
          <Field label={L('Beneficiario', 'Beneficiary')} name="beneficiary" required onInput={(x) => (v.name = x)} />
          <Field label={L('Monto en pesos', 'Amount in pesos')} name="payout-amount" inputmode="decimal" required onInput={(x) => (v.amount = x)} />
          <Field label={L('Concepto', 'Concept')} name="concepto" required onInput={(x) => (v.concepto = x)} />
        </Form>
      </Card>
      <Card title={L('Esperan aprobación (cuatro ojos)', 'Waiting for approval (four eyes)')}>
        {approvals.data?.data.length ? (
          <Table testid="payout-approvals" rows={approvals.data.data} cols={[
            { label: L('Beneficiario', 'Beneficiary'), get: (a) => a.beneficiary_name ?? '—' },
            { label: 'CLABE', get: (a) => a.clabe_masked },
            { label: L('Monto', 'Amount'), get: (a) => money(a.amount_minor, a.currency) },
            { label: L('Pidió', 'Requested by'), get: (a) => a.requested_by_email ?? a.requested_by },
            { label: '', get: (a) => !canDecide ? null : a.requested_by === session.member.id ? <span class="muted">{L('Otra persona debe aprobarla', 'Someone else must approve it')}</span> : (
              <span class="row">
                <button type="button" class="btn small primary" data-testid="approve-payout" onClick={() => decide(a, 'approve')}>{L('Aprobar', 'Approve')}</button>
                <button type="button" class="btn small danger" onClick={() => decide(a, 'reject')}>{L('Rechazar', 'Reject')}</button>
              </span>
            ) },
          ]} />
        ) : <p class="muted">{L('Nada espera aprobación.', 'Nothing waits for approval.')}</p>}
      </Card>
      <Loading state={list} />
      {list.data?.data.length ? (
        <Table testid="payouts" rows={list.data.data} cols={[
          { label: L('Beneficiario', 'Beneficiary'), get: (p) => p.beneficiary_name },
          { label: 'CLABE', get: (p) => `•••• ${String(p.clabe).slice(-4)}` },
          { label: L('Monto', 'Amount'), get: (p) => money(p.amount_minor, p.currency) },
          { label: L('Estado', 'Status'), get: (p) => <Status s={p.status} /> },
          { label: L('Fecha', 'Date'), get: (p) => when(p.created_at) },
        ]} />
      ) : list.data ? <Empty what={L('Sin transferencias.', 'No payouts.')} /> : null}
    </>
  );
}

export function SubMerchants(_p: ViewProps) {
  const acc = useLoad(() => api<{ data: any[] }>('GET', '/v1/connect/accounts?limit=50'));
  const apps = useLoad(() => api<{ data: any[] }>('GET', '/v1/onboarding/applications?limit=50'));
  return (
    <>
      <h1>{L('Subcomercios', 'Sub-merchants')}</h1>
      <Card title={L('Cuentas', 'Accounts')}>
        <Loading state={acc} />
        {acc.data?.data.length ? (
          <Table testid="accounts" rows={acc.data.data} cols={[
            { label: L('Nombre', 'Name'), get: (a) => a.sub_merchant_name },
            { label: L('CLABE de liquidación', 'Settlement CLABE'), get: (a) => a.settlement_clabe_masked },
            { label: L('Conector', 'Connector'), get: (a) => a.connector_key },
            { label: L('Estado', 'Status'), get: (a) => <Status s={a.status} /> },
          ]} />
        ) : acc.data ? <p class="muted">{L('Sin subcomercios.', 'No sub-merchants.')}</p> : null}
      </Card>
      <Card title={L('Solicitudes', 'Applications')}>
        <Loading state={apps} />
        {apps.data?.data.length ? (
          <Table testid="applications" rows={apps.data.data} cols={[
            { label: L('Nombre', 'Name'), get: (a) => a.legal_name },
            { label: 'RFC', get: (a) => a.rfc ?? '—' },
            { label: L('Estado', 'Status'), get: (a) => <Status s={a.status} /> },
            { label: L('Motivo', 'Reason'), get: (a) => a.status_reason ?? '—' },
            { label: L('Fecha', 'Date'), get: (a) => when(a.created_at) },
          ]} />
        ) : apps.data ? <p class="muted">{L('Sin solicitudes.', 'No applications.')}</p> : null}
      </Card>
    </>
  );
}

export function Services(_p: ViewProps) {
  const sp = useLoad(() => api<{ data: any[] }>('GET', '/v1/service_payments?limit=50'));
  const rc = useLoad(() => api<{ data: any[] }>('GET', '/v1/recharges?limit=50'));
  return (
    <>
      <h1>{L('Pagos de servicios y recargas', 'Bill payments and top-ups')}</h1>
      <Card title={L('Pagos de servicios', 'Bill payments')}>
        <Loading state={sp} />
        {sp.data?.data.length ? (
          <Table testid="service-payments" rows={sp.data.data} cols={[
            { label: L('Servicio', 'Biller'), get: (x) => x.biller_code },
            { label: L('Referencia', 'Reference'), get: (x) => x.reference },
            { label: L('Monto', 'Amount'), get: (x) => money(x.amount_minor, x.currency) },
            { label: L('Estado', 'Status'), get: (x) => <Status s={x.status} /> },
            { label: L('Fecha', 'Date'), get: (x) => when(x.created_at) },
          ]} />
        ) : sp.data ? <p class="muted">{L('Sin pagos de servicios.', 'No bill payments.')}</p> : null}
      </Card>
      <Card title={L('Recargas', 'Top-ups')}>
        <Loading state={rc} />
        {rc.data?.data.length ? (
          <Table testid="recharges" rows={rc.data.data} cols={[
            { label: L('Compañía', 'Carrier'), get: (x) => x.carrier_code },
            { label: L('Teléfono', 'Phone'), get: (x) => x.phone_masked },
            { label: L('Monto', 'Amount'), get: (x) => money(x.face_amount_minor, x.currency) },
            { label: L('Estado', 'Status'), get: (x) => <Status s={x.status} /> },
          ]} />
        ) : rc.data ? <p class="muted">{L('Sin recargas.', 'No top-ups.')}</p> : null}
      </Card>
    </>
  );
}
