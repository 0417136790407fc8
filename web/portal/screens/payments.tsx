// Payments: search (id, receipt code, amount, customer email, status, method, date), a payment's page
// (attempts, timeline from the entity history, events and their webhook deliveries, the trace id, a
// refund that says what will happen; above the tenant's threshold it waits for another member),
// refunds with the approvals waiting for a second member, disputes, customers with their saved
// methods, payment links (create, QR, share by WhatsApp).
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { go, store, useStore } from '../state.js';
import { Card, Dl, Empty, Field, Form, Json, L, Loading, Status, Table, money, toMinor, useFields, useLoad, when, statusLabel } from '../ui.js';
import type { ViewProps } from './index.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const STATUSES = ['requires_payment_method', 'requires_confirmation', 'processing', 'requires_action', 'succeeded', 'failed', 'expired', 'canceled'];
const METHODS = ['card', 'spei', 'codi', 'dimo', 'oxxo'];

/** One search box understands an id, a receipt code (W-XXXXX), an amount in pesos or a customer's email. */
export function searchQuery(q: string): Record<string, string> {
  const s = q.trim();
  if (!s) return {};
  if (UUID.test(s)) return { id: s };
  if (/^[A-Z]-?[A-Z0-9]{4,}$/i.test(s)) return { receipt_code: s.toUpperCase() };
  if (s.includes('@')) return { customer_email: s };
  const m = toMinor(s);
  if (m !== undefined) return { amount_minor: String(m) };
  return { receipt_code: s.toUpperCase() };
}

export function Payments({ params }: ViewProps) {
  const [f, setF] = useState<Record<string, string>>(() => ({ ...searchQuery(params.q ?? ''), ...(params.status ? { status: params.status } : {}) }));
  const [after, setAfter] = useState<string[]>([]);
  // The header's search box lands here with ?q=…; on this screen already, a new one replaces the filters.
  useEffect(() => {
    if (params.q === undefined && params.status === undefined) return;
    setAfter([]);
    setF({ ...searchQuery(params.q ?? ''), ...(params.status ? { status: params.status } : {}) });
  }, [params.q, params.status]);
  const key = JSON.stringify([f, after]);
  const list = useLoad(async () => {
    if (f.id) {
      try {
        return { data: [await api('GET', `/v1/payment_intents/${f.id}`)], has_more: false };
      } catch {
        return { data: [], has_more: false };
      }
    }
    const q = new URLSearchParams({ limit: '25' });
    for (const [k, v] of Object.entries(f)) if (v) q.set(k === 'from' ? 'created[gte]' : k === 'to' ? 'created[lt]' : k, k === 'from' || k === 'to' ? new Date(`${v}T00:00:00-06:00`).toISOString() : v);
    if (after.length) q.set('starting_after', after[after.length - 1]);
    return api<{ data: any[]; has_more: boolean }>('GET', `/v1/payment_intents?${q}`);
  }, [key]);
  const v = { ...f };
  return (
    <>
      <h1>{L('Pagos', 'Payments')}</h1>
      {/* Uncontrolled fields (defaultValue), re-made when the filters change: a list that finishes loading
          while the member types must not put the previous search back into the box. */}
      <form class="filters" key={JSON.stringify(f)} data-testid="payment-search" onSubmit={(e) => {
        e.preventDefault();
        const fd = new FormData(e.currentTarget as HTMLFormElement);
        const next: Record<string, string> = { ...searchQuery(String(fd.get('q') ?? '')) };
        for (const k of ['status', 'method', 'from', 'to']) if (fd.get(k)) next[k] = String(fd.get(k));
        setAfter([]);
        setF(next);
      }}>
        <div class="field grow">
          <label for="pq">{L('Id, código de recibo, monto o correo', 'Id, receipt code, amount or email')}</label>
          <input id="pq" name="q" type="search" data-testid="search-q" defaultValue={v.id ?? v.receipt_code ?? v.customer_email ?? (v.amount_minor ? (Number(v.amount_minor) / 100).toFixed(2) : '')} />
        </div>
        <div class="field">
          <label for="ps">{L('Estado', 'Status')}</label>
          <select id="ps" name="status"><option value="">{L('Todos', 'All')}</option>{STATUSES.map((s) => <option value={s} selected={v.status === s}>{statusLabel(s)}</option>)}</select>
        </div>
        <div class="field">
          <label for="pm">{L('Método', 'Method')}</label>
          <select id="pm" name="method"><option value="">{L('Todos', 'All')}</option>{METHODS.map((s) => <option value={s} selected={v.method === s}>{s}</option>)}</select>
        </div>
        <div class="field"><label for="pf">{L('Desde', 'From')}</label><input id="pf" name="from" type="date" defaultValue={v.from} /></div>
        <div class="field"><label for="pt">{L('Hasta (sin incluir)', 'Until (excluded)')}</label><input id="pt" name="to" type="date" defaultValue={v.to} /></div>
        <button type="submit" class="btn primary" data-testid="search-go">{L('Buscar', 'Search')}</button>
      </form>
      <Loading state={list} />
      {list.data && !list.data.data.length ? (
        <Empty what={L('No hay pagos con esos filtros.', 'No payments match.')} curl={`curl -s ${location.origin}/v1/payment_intents -H "Authorization: Bearer sk_test_…" -H "Idempotency-Key: $(uuidgen)" -H 'Content-Type: application/json' -d '{"amount_minor":15000,"currency":"MXN"}'`} />
      ) : null}
      {list.data?.data.length ? (
        <>
          <Table testid="payments" caption={L('Pagos', 'Payments')} rows={list.data.data} onRow={(p) => go(`/payments/${p.id}`)} cols={[
            { label: L('Recibo', 'Receipt'), get: (p) => p.receipt_code },
            { label: L('Monto', 'Amount'), get: (p) => money(p.amount_minor, p.currency), cls: 'num' },
            { label: L('Estado', 'Status'), get: (p) => <Status s={p.status} /> },
            { label: L('Descripción', 'Description'), get: (p) => p.description ?? p.metadata?.concepto ?? '—' },
            { label: L('Fecha', 'Date'), get: (p) => when(p.created_at) },
          ]} />
          <div class="row pager">
            {after.length ? <button type="button" class="btn" onClick={() => setAfter(after.slice(0, -1))}>{L('Anterior', 'Previous')}</button> : null}
            {list.data.has_more ? <button type="button" class="btn" data-testid="next-page" onClick={() => setAfter([...after, list.data!.data[list.data!.data.length - 1].id])}>{L('Siguiente', 'Next')}</button> : null}
          </div>
        </>
      ) : null}
    </>
  );
}

function RefundBox({ pi, attempt, reload }: { pi: any; attempt: any; reload: () => void }) {
  const left = (attempt.amount_minor ?? pi.amount_minor) - (pi.amount_refunded_minor ?? 0);
  const [amount, setAmount] = useState((left / 100).toFixed(2));
  const f = useFields({ reason: '' });
  const minor = toMinor(amount);
  return (
    <Card title={L('Reembolsar', 'Refund')}>
      <Form testid="refund-form" danger submit={L('Reembolsar', 'Refund')} onSubmit={async () => {
        if (minor === undefined) throw new Error(L('Escribe el monto en pesos, p. ej. 150.00', 'Type the amount in pesos, e.g. 150.00'));
        const r = await api<any>('POST', '/v1/refunds', { attempt_id: attempt.id, amount_minor: minor, ...(f.reason ? { reason: f.reason } : {}) });
        reload();
        store.trigger.changed();
        return r.object === 'refund_approval'
          ? L('Supera el umbral: otra persona del equipo debe aprobarlo (Reembolsos).', 'Above the threshold: another team member must approve it (Refunds).')
          : L('Reembolso solicitado.', 'Refund requested.');
      }}>
        <Field label={L('Monto en pesos', 'Amount in pesos')} name="refund-amount" inputmode="decimal" value={amount} onInput={setAmount} testid="refund-amount" />
        <Field label={L('Motivo (opcional)', 'Reason (optional)')} name="refund-reason" onInput={(v) => (f.reason = v)} />
        <p class="muted" data-testid="refund-preview">
          {minor === undefined ? L('Monto no válido.', 'Invalid amount.') : L(`Se devolverán ${money(minor, pi.currency)} al medio de pago original. Quedarán ${money(left - minor, pi.currency)} por reembolsar.`, `${money(minor, pi.currency)} go back to the original payment method. ${money(left - minor, pi.currency)} will be left to refund.`)}
        </p>
      </Form>
    </Card>
  );
}

export function PaymentDetail({ id, session }: ViewProps) {
  const pi = useLoad(() => api<any>('GET', `/v1/payment_intents/${id}?expand=attempts`), [id]);
  const act = useLoad(() => api<any>('GET', `/v1/payment_intents/${id}/activity`), [id]);
  const canRefund = ['*', 'refunds:write'].some((s) => session.member.scopes.includes(s));
  const p = pi.data;
  const paid = p?.attempts?.find((a: any) => a.status === 'succeeded' || a.status === 'captured');
  return (
    <>
      <p><a href="#/payments">← {L('Pagos', 'Payments')}</a></p>
      <Loading state={pi} />
      {p ? (
        <>
          <h1 data-testid="payment-title">{money(p.amount_minor, p.currency)} <Status s={p.status} /></h1>
          <Card>
            <Dl items={[
              ['Id', <code>{p.id}</code>],
              [L('Código de recibo', 'Receipt code'), <strong data-testid="receipt-code">{p.receipt_code}</strong>],
              [L('Descripción', 'Description'), p.description],
              [L('Cliente', 'Customer'), p.customer_id ? <a href={`#/customers/${p.customer_id}`}>{p.customer_id}</a> : '—'],
              [L('Reembolsado', 'Refunded'), money(p.amount_refunded_minor ?? 0, p.currency)],
              [L('Creado', 'Created'), when(p.created_at)],
              ['Trace id', <code data-testid="trace-id">{act.data?.trace_id ?? '—'}</code>],
              ...Object.entries(p.metadata ?? {}).map(([k, v]) => [`metadata.${k}`, String(v)] as [string, string]),
            ]} />
          </Card>
          {canRefund && paid && p.status === 'succeeded' ? <RefundBox pi={p} attempt={paid} reload={() => { pi.reload(); act.reload(); }} /> : null}
          <Card title={L('Intentos', 'Attempts')}>
            <Table testid="attempts" rows={p.attempts ?? []} cols={[
              { label: L('Método', 'Method'), get: (a) => a.method },
              { label: L('Estado', 'Status'), get: (a) => <Status s={a.status} /> },
              { label: L('Conector', 'Connector'), get: (a) => a.connector_key ?? '—' },
              { label: L('Referencia', 'Reference'), get: (a) => a.provider_ref ?? '—' },
              { label: L('Error', 'Error'), get: (a) => a.failure_message ?? a.failure_code ?? '—' },
            ]} />
          </Card>
          <Loading state={act} />
          {act.data ? (
            <>
              <Card title={L('Línea de tiempo', 'Timeline')}>
                <ol class="timeline" data-testid="timeline">
                  {act.data.history.map((h: any) => (
                    <li><time>{when(h.created_at)}</time> <code>{h.kind}</code> {h.event}: {h.from_status ?? '∅'} → <Status s={h.to_status} /></li>
                  ))}
                </ol>
              </Card>
              <Card title={L('Eventos y entregas', 'Events and deliveries')}>
                {act.data.events.length ? (
                  <Table testid="activity-events" rows={act.data.events} cols={[
                    { label: L('Evento', 'Event'), get: (e) => e.event_type },
                    { label: L('Fecha', 'Date'), get: (e) => when(e.created_at) },
                    { label: L('Entregas', 'Deliveries'), get: (e) => e.deliveries.length ? e.deliveries.map((d: any) => <div><Status s={d.status} /> {d.attempts}× {d.last_status ? `HTTP ${d.last_status}` : ''}</div>) : '—' },
                  ]} />
                ) : <p class="muted">{L('Sin eventos aún.', 'No events yet.')}</p>}
              </Card>
            </>
          ) : null}
          <Json value={p} />
        </>
      ) : null}
    </>
  );
}

export function Refunds({ session }: ViewProps) {
  const refunds = useLoad(() => api<{ data: any[] }>('GET', '/v1/refunds?limit=50'));
  const approvals = useLoad(() => api<{ data: any[] }>('GET', '/refund_approvals?status=pending'));
  const canDecide = ['*', 'refunds:write'].some((s) => session.member.scopes.includes(s));
  return (
    <>
      <h1>{L('Reembolsos', 'Refunds')}</h1>
      <Card title={L('Esperan aprobación (cuatro ojos)', 'Waiting for approval (four eyes)')}>
        <Loading state={approvals} />
        {approvals.data && !approvals.data.data.length ? <p class="muted">{L('Nada espera aprobación.', 'Nothing waits for approval.')}</p> : null}
        {approvals.data?.data.length ? (
          <Table testid="approvals" rows={approvals.data.data} cols={[
            { label: L('Monto', 'Amount'), get: (a) => money(a.amount_minor, a.currency) },
            { label: L('Pidió', 'Requested by'), get: (a) => a.requested_by_email ?? a.requested_by },
            { label: L('Motivo', 'Reason'), get: (a) => a.reason ?? '—' },
            { label: L('Fecha', 'Date'), get: (a) => when(a.created_at) },
            { label: '', get: (a) => canDecide ? (
              a.requested_by === session.member.id ? <span class="muted">{L('Otra persona debe aprobarlo', 'Someone else must approve it')}</span> : (
                <span class="row">
                  <button type="button" class="btn small primary" data-testid="approve" onClick={async () => {
                    if (!confirm(L(`Se devolverán ${money(a.amount_minor, a.currency)} al cliente. ¿Aprobar?`, `${money(a.amount_minor, a.currency)} will go back to the customer. Approve?`))) return;
                    try {
                      await api('POST', `/refund_approvals/${a.id}/approve`);
                      store.trigger.notify({ kind: 'ok', text: L('Aprobado: el reembolso está en curso.', 'Approved: the refund is under way.') });
                    } catch (x) {
                      store.trigger.notify({ kind: 'error', text: (x as Error).message });
                    }
                    approvals.reload();
                    refunds.reload();
                  }}>{L('Aprobar', 'Approve')}</button>
                  <button type="button" class="btn small danger" onClick={async () => {
                    await api('POST', `/refund_approvals/${a.id}/reject`);
                    approvals.reload();
                  }}>{L('Rechazar', 'Reject')}</button>
                </span>
              )
            ) : null },
          ]} />
        ) : null}
      </Card>
      <Loading state={refunds} />
      {refunds.data?.data.length ? (
        <Table testid="refunds" rows={refunds.data.data} onRow={(r) => go(`/payments/${r.payment_intent_id}`)} cols={[
          { label: L('Pago', 'Payment'), get: (r) => <code>{r.payment_intent_id.slice(0, 8)}…</code> },
          { label: L('Monto', 'Amount'), get: (r) => money(r.amount_minor, r.currency) },
          { label: L('Estado', 'Status'), get: (r) => <Status s={r.status} /> },
          { label: L('Fecha', 'Date'), get: (r) => when(r.created_at) },
        ]} />
      ) : refunds.data ? <Empty what={L('Sin reembolsos.', 'No refunds.')} /> : null}
    </>
  );
}

export function Disputes(_p: ViewProps) {
  const d = useLoad(() => api<{ data: any[] }>('GET', '/v1/disputes'));
  return (
    <>
      <h1>{L('Disputas', 'Disputes')}</h1>
      <Loading state={d} />
      {d.data?.data.length ? (
        <Table testid="disputes" rows={d.data.data} cols={[
          { label: L('Monto', 'Amount'), get: (x) => money(x.amount_minor, x.currency) },
          { label: L('Estado', 'Status'), get: (x) => <Status s={x.status} /> },
          { label: L('Motivo', 'Reason'), get: (x) => x.reason ?? '—' },
          { label: L('Evidencia hasta', 'Evidence due'), get: (x) => (x.evidence_due_by ? when(x.evidence_due_by) : '—') },
          { label: L('Pago', 'Payment'), get: (x) => <a href={`#/payments/${x.payment_intent_id}`}>{String(x.payment_intent_id).slice(0, 8)}…</a> },
          { label: L('Fecha', 'Date'), get: (x) => when(x.created_at) },
        ]} />
      ) : d.data ? <Empty what={L('Sin disputas. Bien.', 'No disputes. Good.')} /> : null}
    </>
  );
}

export function Customers(_p: ViewProps) {
  const c = useLoad(() => api<{ data: any[] }>('GET', '/v1/customers?limit=50'));
  const f = useFields({ name: '', email: '' });
  return (
    <>
      <h1>{L('Clientes', 'Customers')}</h1>
      <Card title={L('Nuevo cliente', 'New customer')}>
        <Form testid="customer-form" submit={L('Crear', 'Create')} onSubmit={async () => {
          await api('POST', '/v1/customers', { name: f.name, ...(f.email ? { email: f.email } : {}) });
          c.reload();
          return L('Cliente creado.', 'Customer created.');
        }}>
          <Field label={L('Nombre', 'Name')} name="customer-name" required onInput={(v) => (f.name = v)} />
          <Field label={L('Correo', 'Email')} name="customer-email" type="email" onInput={(v) => (f.email = v)} />
        </Form>
      </Card>
      <Loading state={c} />
      {c.data?.data.length ? (
        <Table testid="customers" rows={c.data.data} onRow={(x) => go(`/customers/${x.id}`)} cols={[
          { label: L('Nombre', 'Name'), get: (x) => x.name ?? '—' },
          { label: L('Correo', 'Email'), get: (x) => x.email ?? '—' },
          { label: L('Creado', 'Created'), get: (x) => when(x.created_at) },
        ]} />
      ) : c.data ? <Empty what={L('Sin clientes.', 'No customers.')} /> : null}
    </>
  );
}

export function CustomerDetail({ id }: ViewProps) {
  const c = useLoad(() => api<any>('GET', `/v1/customers/${id}`), [id]);
  const pm = useLoad(() => api<{ data: any[] }>('GET', `/v1/customers/${id}/payment_methods`), [id]);
  const pays = useLoad(() => api<{ data: any[] }>('GET', `/v1/payment_intents?customer=${id}&limit=20`), [id]);
  return (
    <>
      <p><a href="#/customers">← {L('Clientes', 'Customers')}</a></p>
      <Loading state={c} />
      {c.data ? (
        <>
          <h1>{c.data.name ?? c.data.id}</h1>
          <Card><Dl items={[['Id', <code>{c.data.id}</code>], [L('Correo', 'Email'), c.data.email], [L('Teléfono', 'Phone'), c.data.phone]]} /></Card>
        </>
      ) : null}
      <Card title={L('Métodos guardados', 'Saved methods')}>
        {pm.data?.data.length ? (
          <Table testid="methods" rows={pm.data.data} cols={[
            { label: L('Tarjeta', 'Card'), get: (m) => <span data-testid="saved-card">{m.brand ? `${m.brand} •••• ${m.last4}` : '—'}</span> },
            { label: L('Conector', 'Connector'), get: (m) => m.connector },
            { label: L('Estado', 'Status'), get: (m) => <Status s={m.status} /> },
            { label: L('Guardada', 'Saved'), get: (m) => when(m.created_at) },
          ]} />
        ) : <p class="muted">{L('Sin métodos guardados.', 'No saved methods.')}</p>}
      </Card>
      <Card title={L('Pagos', 'Payments')}>
        {pays.data?.data.length ? (
          <Table rows={pays.data.data} onRow={(p) => go(`/payments/${p.id}`)} cols={[
            { label: L('Recibo', 'Receipt'), get: (p) => p.receipt_code },
            { label: L('Monto', 'Amount'), get: (p) => money(p.amount_minor, p.currency) },
            { label: L('Estado', 'Status'), get: (p) => <Status s={p.status} /> },
          ]} />
        ) : <p class="muted">{L('Sin pagos.', 'No payments.')}</p>}
      </Card>
    </>
  );
}

export function Links(_p: ViewProps) {
  const links = useLoad(() => api<{ data: any[] }>('GET', '/v1/payment_links?limit=50'));
  const [amount, setAmount] = useState('');
  const [concept, setConcept] = useState('');
  const [made, setMade] = useState<any>(null);
  const mode = useStore((c) => c.mode);
  // A link's url is the service's path (/pay/<slug>): shared and put in the QR as an absolute URL.
  const abs = (l: any) => new URL(l.url, location.origin).href;
  const share = (l: any) => `https://wa.me/?text=${encodeURIComponent(`${l.concepto}: ${abs(l)}`)}`;
  return (
    <>
      <h1>{L('Ligas de pago', 'Payment links')}</h1>
      <Card title={L('Nueva liga', 'New link')}>
        <Form testid="link-form" submit={L('Crear liga', 'Create link')} onSubmit={async () => {
          const m = toMinor(amount);
          if (m === undefined) throw new Error(L('Monto no válido.', 'Invalid amount.'));
          const l = await api<any>('POST', '/v1/payment_links', { amount_minor: m, currency: 'MXN', concepto: concept });
          setMade(l);
          links.reload();
          return L('Liga creada.', 'Link created.');
        }}>
          <Field label={L('Monto en pesos', 'Amount in pesos')} name="link-amount" inputmode="decimal" required value={amount} onInput={setAmount} />
          <Field label={L('Concepto', 'Concept')} name="link-concept" required value={concept} onInput={setConcept} />
        </Form>
      </Card>
      {made ? (
        <Card title={L('Compártela', 'Share it')}>
          <img class="qr" data-testid="link-qr" src={`/public/qr.svg?data=${encodeURIComponent(abs(made))}`} width={180} height={180} alt={L('Código QR de la liga', 'QR code of the link')} />
          <p><a href={abs(made)} target="_blank" rel="noopener noreferrer" data-testid="link-url">{abs(made)}</a></p>
          <p><a class="btn" href={share(made)} target="_blank" rel="noopener noreferrer" data-testid="whatsapp">{L('Compartir por WhatsApp', 'Share on WhatsApp')}</a></p>
          {mode === 'test' ? <p class="muted">{L('Liga de prueba: págala con las tarjetas simuladas.', 'Test link: pay it with the simulated cards.')}</p> : null}
        </Card>
      ) : null}
      <Loading state={links} />
      {links.data?.data.length ? (
        <Table testid="links" rows={links.data.data} cols={[
          { label: L('Concepto', 'Concept'), get: (l) => l.concepto },
          { label: L('Monto', 'Amount'), get: (l) => money(l.amount_minor, l.currency) },
          { label: L('Estado', 'Status'), get: (l) => <Status s={l.paid_at && !l.reusable ? 'succeeded' : l.active ? 'active' : 'disabled'} /> },
          { label: 'URL', get: (l) => <a href={abs(l)} target="_blank" rel="noopener noreferrer">{l.url}</a> },
          { label: '', get: (l) => <a class="btn small" href={share(l)} target="_blank" rel="noopener noreferrer">WhatsApp</a> },
        ]} />
      ) : links.data ? <Empty what={L('Sin ligas.', 'No links.')} /> : null}
    </>
  );
}
