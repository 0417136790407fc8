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
  // Collected by method is the cash cut's (reports:read); a member without that scope sees the totals only.
  const books = ['*', 'reports:read'].some((s) => session.member.scopes.includes(s));
  const cut = useLoad(() => (books ? api<any>('GET', `/v1/reports/cash-cut?from=${today}&to=${day(new Date(Date.now() + 86_400_000).toISOString())}`) : Promise.resolve(null)));
  const waiting = useLoad(() => api<{ data: any[] }>('GET', '/refund_approvals?status=pending').catch(() => ({ data: [] })));
  const rows = pays.data?.data ?? [];
  const ok = rows.filter((p) => p.status === 'succeeded');
  const byMethod: Array<{ key: string; total_minor: number }> = cut.data?.by_method ?? [];
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
          {byMethod.length ? (
            <Bars title={L('Cobrado hoy por método (corte de caja)', 'Collected today by method (cash cut)')} labels={byMethod.map((b) => b.key)} series={[{ name: L('Cobrado', 'Collected'), values: byMethod.map((b) => b.total_minor), color: '#1f7a4d' }]} />
          ) : rows.length ? null : (
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
