// Inicio: today's volume and success rate by method (the day in America/Mexico_City), and what waits
// for a decision (refund approvals).
import { api } from '../api.js';
import { go } from '../state.js';
import { Bars, Card, Dl, Empty, L, Loading, day, money, useLoad } from '../ui.js';
import type { ViewProps } from './index.js';

export function Home({ session }: ViewProps) {
  const today = day(new Date().toISOString());
  const from = new Date(`${today}T00:00:00-06:00`).toISOString();
  const pays = useLoad(() => api<{ data: any[]; has_more: boolean }>('GET', `/v1/payment_intents?limit=100&created[gte]=${encodeURIComponent(from)}`));
  const waiting = useLoad(() => api<{ data: any[] }>('GET', '/refund_approvals?status=pending').catch(() => ({ data: [] })));
  const rows = pays.data?.data ?? [];
  const ok = rows.filter((p) => p.status === 'succeeded');
  const byMethod = new Map<string, { n: number; ok: number; minor: number }>();
  for (const p of rows) {
    const m = p.payment_method_type ?? p.method ?? p.attempts?.[0]?.method ?? L('sin método', 'no method');
    const e = byMethod.get(m) ?? { n: 0, ok: 0, minor: 0 };
    e.n++;
    if (p.status === 'succeeded') {
      e.ok++;
      e.minor += p.amount_minor;
    }
    byMethod.set(m, e);
  }
  const labels = [...byMethod.keys()];
  return (
    <>
      <h1>{L(`Hola, ${session.member.name || session.member.email}`, `Hello, ${session.member.name || session.member.email}`)}</h1>
      <Loading state={pays} />
      {pays.data ? (
        <Card title={L(`Hoy (${today})`, `Today (${today})`)}>
          <Dl items={[
            [L('Cobrado', 'Collected'), <strong data-testid="today-volume">{money(ok.reduce((s, p) => s + p.amount_minor, 0))}</strong>],
            [L('Pagos', 'Payments'), `${rows.length}${pays.data.has_more ? '+' : ''}`],
            [L('Éxito', 'Success rate'), rows.length ? `${Math.round((ok.length / rows.length) * 100)} %` : '—'],
          ]} />
          {labels.length ? (
            <Bars title={L('Cobrado hoy por método', 'Collected today by method')} labels={labels} series={[{ name: L('Cobrado', 'Collected'), values: labels.map((l) => byMethod.get(l)!.minor), color: '#1f7a4d' }]} />
          ) : (
            <Empty what={L('Aún no hay pagos hoy.', 'No payments today yet.')} curl={`curl -s ${location.origin}/v1/payment_intents -H "Authorization: Bearer sk_test_…" -H "Idempotency-Key: $(uuidgen)" -H 'Content-Type: application/json' -d '{"amount_minor":15000,"currency":"MXN"}'`} />
          )}
        </Card>
      ) : null}
      <Card title={L('Espera tu decisión', 'Waiting for your decision')}>
        {waiting.data?.data.length ? (
          <p><button type="button" class="btn primary" onClick={() => go('/refunds')}>{L(`${waiting.data.data.length} reembolso(s) por aprobar`, `${waiting.data.data.length} refund(s) to approve`)}</button></p>
        ) : <p class="muted">{L('Nada por ahora.', 'Nothing for now.')}</p>}
      </Card>
    </>
  );
}
