// Terminals (docs/terminals.md): the account's point-of-sale terminals in the mode of the toggle,
// listed for every member; registered, activated, deactivated (with a reason, for the audit log) and
// reassigned to another branch or register by the team's owner and admins only (scope "*" or
// "settings:manage", as api/routes/terminals.ts enforces). Fields as schemas/terminals.ts answers them.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { store } from '../state.js';
import { Card, Empty, Field, Form, L, Loading, Status, Table, useFields, useLoad, when } from '../ui.js';
import type { ViewProps } from './index.js';

interface Terminal { id: string; serial: string; branch: string; register?: string; label?: string; status: 'registered' | 'active' | 'inactive'; livemode: boolean; activated_at?: string; created_at: string; updated_at: string }
type Acting = { kind: 'deactivate' | 'reassign'; t: Terminal } | null;

export function Terminals({ session }: ViewProps) {
  const list = useLoad(() => api<{ data: Terminal[] }>('GET', '/terminals'));
  const manage = session.member.scopes.includes('*') || session.member.scopes.includes('settings:manage');
  const f = useFields({ serial: '', branch: '', register: '' });
  const [acting, setActing] = useState<Acting>(null);
  const d = useFields({ reason: '', branch: '', register: '' });
  const open = (kind: 'deactivate' | 'reassign', t: Terminal) => {
    d.reason = '';
    d.branch = t.branch;
    d.register = t.register ?? '';
    setActing({ kind, t });
  };
  return (
    <>
      <h1>{L('Terminales', 'Terminals')}</h1>
      <p class="muted">{L('Un cobro puede nombrar una terminal activa en metadata.terminal_id; una terminal desactivada no cobra.', 'A charge may name an active terminal in metadata.terminal_id; a deactivated terminal takes no charges.')}</p>
      {manage ? (
        <Card title={L('Registrar terminal', 'Register a terminal')}>
          <Form testid="terminal-form" submit={L('Registrar', 'Register')} onSubmit={async () => {
            const t = await api<Terminal>('POST', '/terminals', { serial: f.serial, branch: f.branch, ...(f.register ? { register: f.register } : {}) });
            list.reload();
            return L(`Terminal ${t.serial} registrada: actívala para que cobre.`, `Terminal ${t.serial} registered: activate it to take charges.`);
          }}>
            <Field label={L('Número de serie', 'Serial number')} name="terminal-serial" required onInput={(v) => (f.serial = v)} hint={L('Letras, dígitos, - _ . (hasta 64)', 'Letters, digits, - _ . (up to 64)')} />
            <Field label={L('Sucursal', 'Branch')} name="terminal-branch" required onInput={(v) => (f.branch = v)} />
            <Field label={L('Caja (opcional)', 'Register (optional)')} name="terminal-register" onInput={(v) => (f.register = v)} />
          </Form>
        </Card>
      ) : (
        <p class="muted" data-testid="terminals-readonly">{L('Solo el dueño y los administradores del equipo administran las terminales.', "Only the team's owner and admins administer terminals.")}</p>
      )}
      {acting ? (
        <Card key={`${acting.kind}-${acting.t.id}`} title={acting.kind === 'deactivate' ? L(`Desactivar ${acting.t.serial}`, `Deactivate ${acting.t.serial}`) : L(`Reasignar ${acting.t.serial}`, `Reassign ${acting.t.serial}`)}
          actions={<button type="button" class="btn small" onClick={() => setActing(null)}>{L('Cerrar', 'Close')}</button>}>
          {acting.kind === 'deactivate' ? (
            <Form testid="deactivate-form" danger submit={L('Confirmar desactivación', 'Confirm deactivation')} onSubmit={async () => {
              await api('POST', `/terminals/${acting.t.id}/deactivate`, { reason: d.reason });
              setActing(null);
              list.reload();
              return L(`Terminal ${acting.t.serial} desactivada: los cobros que la nombren se rechazan.`, `Terminal ${acting.t.serial} deactivated: charges naming it are refused.`);
            }}>
              <Field label={L('Motivo', 'Reason')} name="terminal-reason" required onInput={(v) => (d.reason = v)} hint={L('Queda en la bitácora.', 'Recorded in the audit log.')} />
            </Form>
          ) : (
            <Form testid="reassign-form" submit={L('Reasignar', 'Reassign')} onSubmit={async () => {
              await api('POST', `/terminals/${acting.t.id}/reassign`, { branch: d.branch, ...(d.register ? { register: d.register } : {}) });
              setActing(null);
              list.reload();
              return L(`Terminal ${acting.t.serial} reasignada.`, `Terminal ${acting.t.serial} reassigned.`);
            }}>
              <Field label={L('Nueva sucursal', 'New branch')} name="reassign-branch" value={d.branch} required onInput={(v) => (d.branch = v)} />
              <Field label={L('Nueva caja (vacía: la misma)', 'New register (empty: unchanged)')} name="reassign-register" value={d.register} onInput={(v) => (d.register = v)} />
            </Form>
          )}
        </Card>
      ) : null}
      <Loading state={list} />
      {list.data && !list.data.data.length ? <Empty what={L('Aún no hay terminales en este modo.', 'No terminals in this mode yet.')} /> : null}
      {list.data?.data.length ? (
        <Table testid="terminals" caption={L('Terminales de la cuenta', "The account's terminals")} rows={list.data.data} cols={[
          { label: L('Serie', 'Serial'), get: (t) => <code>{t.serial}</code> },
          { label: L('Sucursal', 'Branch'), get: (t) => t.branch },
          { label: L('Caja', 'Register'), get: (t) => t.register ?? '—' },
          { label: L('Estado', 'Status'), get: (t) => <Status s={t.status} /> },
          { label: L('Activada', 'Activated'), get: (t) => (t.activated_at ? when(t.activated_at) : '—') },
          ...(manage ? [{ label: L('Acciones', 'Actions'), get: (t: Terminal) => (
            <span class="row">
              {t.status !== 'active' ? (
                <button type="button" class="btn small" aria-label={L(`Activar ${t.serial}`, `Activate ${t.serial}`)} onClick={async () => {
                  try {
                    await api('POST', `/terminals/${t.id}/activate`, {});
                    store.trigger.notify({ kind: 'ok', text: L(`Terminal ${t.serial} activada.`, `Terminal ${t.serial} activated.`) });
                  } catch (e) {
                    store.trigger.notify({ kind: 'error', text: (e as Error).message });
                  }
                  list.reload();
                }}>{L('Activar', 'Activate')}</button>
              ) : (
                <button type="button" class="btn small danger" aria-label={L(`Desactivar ${t.serial}`, `Deactivate ${t.serial}`)} onClick={() => open('deactivate', t)}>{L('Desactivar', 'Deactivate')}</button>
              )}
              <button type="button" class="btn small" aria-label={L(`Reasignar ${t.serial}`, `Reassign ${t.serial}`)} onClick={() => open('reassign', t)}>{L('Reasignar', 'Reassign')}</button>
            </span>
          ) }] : []),
        ]} />
      ) : null}
    </>
  );
}
