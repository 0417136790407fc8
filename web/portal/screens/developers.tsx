// Developers: API keys (issue with scopes, the secret shown once, roll, revoke; the mode toggle picks
// test or live keys), webhook endpoints with their delivery log (status, attempts, resend) and secret
// rotation, and the account's events.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { store, useStore } from '../state.js';
import { Card, Empty, Field, Form, Json, L, Loading, Status, Table, useFields, useLoad, when } from '../ui.js';
import type { ViewProps } from './index.js';

const SCOPES = ['*', 'payments:read', 'payments:write', 'refunds:write', 'payouts:write', 'webhooks:manage', 'invoices:write', 'reports:read'];

/** A secret shown once: copy it now, it is not shown again. */
function OnceSecret({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  return (
    <div class="secret" role="alert" data-testid="secret-once">
      <p><strong>{label}</strong> {L('Cópiala ahora: no se vuelve a mostrar.', 'Copy it now: it is not shown again.')}</p>
      <code data-testid="secret-value">{value}</code>
      <div class="row">
        <button type="button" class="btn" onClick={() => navigator.clipboard?.writeText(value)}>{L('Copiar', 'Copy')}</button>
        <button type="button" class="btn" onClick={onDone}>{L('Listo, la guardé', 'Done, I saved it')}</button>
      </div>
    </div>
  );
}

export function Keys(_p: ViewProps) {
  const mode = useStore((c) => c.mode);
  const keys = useLoad(() => api<{ data: any[] }>('GET', '/api_keys'));
  const [secret, setSecret] = useState<string | null>(null);
  const [scopes, setScopes] = useState<string[]>(['*']);
  return (
    <>
      <h1>{L('Llaves API', 'API keys')} <small class="muted">{mode === 'live' ? L('(modo real)', '(live mode)') : L('(modo de prueba)', '(test mode)')}</small></h1>
      {secret ? <OnceSecret label={L('Tu nueva llave:', 'Your new key:')} value={secret} onDone={() => setSecret(null)} /> : null}
      <Card title={L('Crear llave', 'Create key')}>
        <Form testid="key-form" submit={L('Crear llave', 'Create key')} onSubmit={async () => {
          const k = await api<{ key: string }>('POST', '/api_keys', { scopes });
          setSecret(k.key);
          keys.reload();
          return L('Llave creada.', 'Key created.');
        }}>
          <fieldset class="checks">
            <legend>{L('Permisos (scopes)', 'Scopes')}</legend>
            {SCOPES.map((s) => (
              <label>
                <input type="checkbox" name="scope" value={s} checked={scopes.includes(s)} data-testid={`scope-${s}`}
                  onChange={(e) => setScopes((cur) => ((e.target as HTMLInputElement).checked ? [...cur, s] : cur.filter((x) => x !== s)))} />
                {s === '*' ? L('* (todo)', '* (everything)') : s}
              </label>
            ))}
          </fieldset>
        </Form>
      </Card>
      <Loading state={keys} />
      {keys.data ? (
        <Table testid="keys" rows={keys.data.data} cols={[
          { label: L('Llave', 'Key'), get: (k) => <code>{k.key_prefix}</code> },
          { label: L('Permisos', 'Scopes'), get: (k) => k.scopes.join(', ') },
          { label: L('Creada', 'Created'), get: (k) => when(k.created_at) },
          { label: L('Estado', 'Status'), get: (k) => <Status s={k.revoked ? 'disabled' : 'active'} /> },
          { label: L('Acciones', 'Actions'), get: (k) => k.revoked ? null : (
            <span class="row">
              <button type="button" class="btn small" data-testid="roll-key" onClick={async () => {
                if (!confirm(L('Se crea una llave nueva con los mismos permisos y esta deja de funcionar al instante. ¿Continuar?', 'A new key with the same scopes is made and this one stops working at once. Continue?'))) return;
                const n = await api<{ key: string }>('POST', `/api_keys/${k.id}/roll`);
                setSecret(n.key);
                keys.reload();
              }}>{L('Rotar', 'Roll')}</button>
              <button type="button" class="btn small danger" data-testid="revoke-key" onClick={async () => {
                if (!confirm(L('La llave dejará de funcionar al instante. ¿Revocar?', 'The key stops working at once. Revoke?'))) return;
                await api('DELETE', `/api_keys/${k.id}`);
                keys.reload();
              }}>{L('Revocar', 'Revoke')}</button>
            </span>
          ) },
        ]} />
      ) : null}
      <Card title={L('Pruébala', 'Try it')}>
        <pre class="code">{`curl -s ${location.origin}/v1/payment_intents \\\n  -H "Authorization: Bearer sk_test_…" \\\n  -H "Idempotency-Key: $(uuidgen)" \\\n  -H 'Content-Type: application/json' \\\n  -d '{"amount_minor":15000,"currency":"MXN"}'`}</pre>
      </Card>
    </>
  );
}

function Deliveries({ endpoint }: { endpoint: any }) {
  const d = useLoad(() => api<{ data: any[] }>('GET', `/v1/webhook_endpoints/${endpoint.id}/deliveries?limit=50`), [endpoint.id]);
  return (
    <Card title={L('Entregas', 'Deliveries')}>
      <Loading state={d} />
      {d.data && !d.data.data.length ? <Empty what={L('Aún no hay entregas a este endpoint.', 'No deliveries to this endpoint yet.')} /> : null}
      {d.data?.data.length ? (
        <Table testid="deliveries" rows={d.data.data} cols={[
          { label: L('Evento', 'Event'), get: (x) => x.event_type },
          { label: L('Estado', 'Status'), get: (x) => <Status s={x.status} /> },
          { label: L('Intentos', 'Attempts'), get: (x) => String(x.attempts) },
          { label: L('Última respuesta', 'Last answer'), get: (x) => (x.last_status ? `HTTP ${x.last_status}` : x.last_error ?? '—') },
          { label: L('En cola', 'Queued'), get: (x) => when(x.queued_at) },
          { label: '', get: (x) => (
            <button type="button" class="btn small" data-testid="resend" onClick={async () => {
              await api('POST', `/v1/webhook_deliveries/${x.id}/resend`);
              store.trigger.notify({ kind: 'ok', text: L('Reenvío programado.', 'Resend queued.') });
              d.reload();
            }}>{L('Reenviar', 'Resend')}</button>
          ) },
        ]} />
      ) : null}
    </Card>
  );
}

export function Webhooks(_p: ViewProps) {
  const eps = useLoad(() => api<{ data: any[] }>('GET', '/v1/webhook_endpoints'));
  const [sel, setSel] = useState<any>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const f = useFields({ url: '' });
  return (
    <>
      <h1>Webhooks</h1>
      {secret ? <OnceSecret label={L('Secreto de firma:', 'Signing secret:')} value={secret} onDone={() => setSecret(null)} /> : null}
      <Card title={L('Nuevo endpoint', 'New endpoint')}>
        <Form testid="endpoint-form" submit={L('Agregar', 'Add')} onSubmit={async () => {
          const e = await api<{ secret?: string }>('POST', '/v1/webhook_endpoints', { url: f.url });
          if (e.secret) setSecret(e.secret);
          eps.reload();
          return L('Endpoint agregado.', 'Endpoint added.');
        }}>
          <Field label="URL (https://…)" name="url" type="url" required onInput={(v) => (f.url = v)} />
        </Form>
      </Card>
      <Loading state={eps} />
      {eps.data && !eps.data.data.length ? <Empty what={L('Sin endpoints.', 'No endpoints.')} curl={`curl -s ${location.origin}/v1/webhook_endpoints -H "Authorization: Bearer sk_test_…" -H 'Content-Type: application/json' -d '{"url":"https://example.com/webhooks"}'`} /> : null}
      {eps.data?.data.length ? (
        <Table testid="endpoints" rows={eps.data.data} onRow={setSel} cols={[
          { label: 'URL', get: (e) => e.url },
          { label: L('Estado', 'Status'), get: (e) => <Status s={e.active ? 'active' : 'disabled'} /> },
          { label: L('Eventos', 'Events'), get: (e) => (e.events ? e.events.join(', ') : L('todos', 'all')) },
          { label: '', get: (e) => e.active ? (
            <button type="button" class="btn small" onClick={async (ev) => {
              ev.stopPropagation();
              if (!confirm(L('El secreto anterior sigue valiendo 24 horas. ¿Rotar?', 'The previous secret keeps working for 24 hours. Roll?'))) return;
              const r = await api<{ secret: string }>('POST', `/v1/webhook_endpoints/${e.id}/rotate_secret`);
              setSecret(r.secret);
            }}>{L('Rotar secreto', 'Roll secret')}</button>
          ) : null },
        ]} />
      ) : null}
      {sel ? <Deliveries endpoint={sel} /> : null}
    </>
  );
}

export function Events(_p: ViewProps) {
  const ev = useLoad(() => api<{ data: any[] }>('GET', '/v1/events?limit=50'));
  return (
    <>
      <h1>{L('Eventos', 'Events')}</h1>
      <Loading state={ev} />
      {ev.data && !ev.data.data.length ? <Empty what={L('Sin eventos (la lista se llena cuando hay un endpoint activo).', 'No events (the stream fills while an endpoint is active).')} /> : null}
      {ev.data?.data.length ? (
        <Table testid="events" rows={ev.data.data} cols={[
          { label: L('Tipo', 'Type'), get: (e) => e.event_type },
          { label: L('Objeto', 'Object'), get: (e) => <code>{e.data?.id ?? e.entity_id ?? '—'}</code> },
          { label: L('Fecha', 'Date'), get: (e) => when(e.created_at) },
          { label: '', get: (e) => <Json value={e} /> },
        ]} />
      ) : null}
    </>
  );
}
