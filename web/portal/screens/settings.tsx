// Settings: team and roles (invitations, role and extra scopes, the team-wide two-factor rule),
// security (the member's authenticator app), the audit log, the fiscal profile with its CSD upload,
// checkout branding, routing and fees, the test clock, and the balance.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { store, useStore } from '../state.js';
import { Bars, Card, Dl, Empty, Field, Form, Json, L, Loading, Status, Table, money, useFields, useLoad, when } from '../ui.js';
import type { ViewProps } from './index.js';

const ROLE_LABEL: Record<string, [string, string]> = {
  owner: ['Dueño', 'Owner'], admin: ['Administrador', 'Admin'], developer: ['Desarrollador', 'Developer'], accountant: ['Contador', 'Accountant'], viewer: ['Solo lectura', 'Viewer'],
};
const roleName = (r: string) => L(...(ROLE_LABEL[r] ?? [r, r]));
const EXTRA = ['payments:write', 'refunds:write', 'payouts:write', 'webhooks:manage', 'invoices:write', 'reports:read', 'keys:manage'];

export function Team({ session }: ViewProps) {
  const team = useLoad(() => api<any>('GET', '/team'));
  const manage = session.member.scopes.includes('*') || session.member.scopes.includes('team:manage');
  const f = useFields({ email: '', role: 'accountant' });
  return (
    <>
      <h1>{L('Equipo y roles', 'Team and roles')}</h1>
      {manage ? (
        <Card title={L('Invitar', 'Invite')}>
          <Form testid="invite-form" submit={L('Enviar invitación', 'Send invitation')} onSubmit={async () => {
            await api('POST', '/team/invitations', { email: f.email, role: f.role });
            team.reload();
            return L('Invitación enviada por correo (vale 7 días).', 'Invitation sent by email (valid 7 days).');
          }}>
            <Field label={L('Correo', 'Email')} name="invite-email" type="email" required onInput={(v) => (f.email = v)} testid="invite-email" />
            <Field label={L('Rol', 'Role')} name="invite-role" value={f.role} onInput={(v) => (f.role = v)} testid="invite-role"
              options={['admin', 'developer', 'accountant', 'viewer'].map((r) => [r, roleName(r)] as [string, string])} />
          </Form>
        </Card>
      ) : null}
      <Loading state={team} />
      {team.data ? (
        <>
          {session.member.role === 'owner' ? (
            <Card title={L('Seguridad del equipo', 'Team security')}>
              <label class="check">
                <input type="checkbox" checked={team.data.require_totp} data-testid="require-totp" onChange={async (e) => {
                  await api('PUT', '/team/settings', { require_totp: (e.target as HTMLInputElement).checked });
                  team.reload();
                }} />
                {L('Exigir verificación en dos pasos a todo el equipo', 'Require two-step sign-in for the whole team')}
              </label>
            </Card>
          ) : null}
          <Table testid="members" rows={team.data.members} cols={[
            { label: L('Persona', 'Person'), get: (m) => <span><strong>{m.name || '—'}</strong><br /><small>{m.email}</small></span> },
            { label: L('Rol', 'Role'), get: (m) => manage && m.id !== session.member.id ? (
              <select aria-label={L(`Rol de ${m.email}`, `Role of ${m.email}`)} value={m.role} onChange={async (e) => {
                try {
                  await api('PATCH', `/team/members/${m.id}`, { role: (e.target as HTMLSelectElement).value });
                } catch (x) {
                  store.trigger.notify({ kind: 'error', text: (x as Error).message });
                }
                team.reload();
              }}>
                {['owner', 'admin', 'developer', 'accountant', 'viewer'].map((r) => <option value={r}>{roleName(r)}</option>)}
              </select>
            ) : roleName(m.role) },
            { label: L('Permisos extra', 'Extra scopes'), get: (m) => manage && m.role !== 'owner' && m.role !== 'admin' ? (
              <details>
                <summary>{m.extra_scopes.length ? m.extra_scopes.join(', ') : L('ninguno', 'none')}</summary>
                {EXTRA.map((s) => (
                  <label class="check">
                    <input type="checkbox" checked={m.extra_scopes.includes(s)} data-testid={`extra-${s}`} onChange={async (e) => {
                      const on = (e.target as HTMLInputElement).checked;
                      await api('PATCH', `/team/members/${m.id}`, { extra_scopes: on ? [...m.extra_scopes, s] : m.extra_scopes.filter((x: string) => x !== s) });
                      team.reload();
                    }} />
                    {s}
                  </label>
                ))}
              </details>
            ) : m.extra_scopes.join(', ') || '—' },
            { label: '2FA', get: (m) => <Status s={m.totp_enabled ? 'active' : 'disabled'} /> },
            { label: L('Estado', 'Status'), get: (m) => <Status s={m.status} /> },
            { label: L('Última entrada', 'Last sign-in'), get: (m) => when(m.last_sign_in_at) },
          ]} />
          {team.data.invitations.length ? (
            <Card title={L('Invitaciones pendientes', 'Pending invitations')}>
              <Table rows={team.data.invitations} cols={[
                { label: L('Correo', 'Email'), get: (i) => i.email },
                { label: L('Rol', 'Role'), get: (i) => roleName(i.role) },
                { label: L('Vence', 'Expires'), get: (i) => when(i.expires_at) },
                { label: '', get: (i) => manage ? <button type="button" class="btn small danger" onClick={async () => { await api('DELETE', `/team/invitations/${i.id}`); team.reload(); }}>{L('Revocar', 'Revoke')}</button> : null },
              ]} />
            </Card>
          ) : null}
        </>
      ) : null}
    </>
  );
}

export function Security({ session }: ViewProps) {
  const [setup, setSetup] = useState<null | { secret: string; otpauth_url: string; qr_svg: string }>(null);
  const f = useFields({ code: '' });
  return (
    <>
      <h1>{L('Seguridad', 'Security')}</h1>
      <Card title={L('Verificación en dos pasos', 'Two-step verification')}>
        {session.member.totp_enabled ? (
          <p data-testid="totp-on"><Status s="active" /> {L('Activa: al entrar te pedimos el código de tu app.', 'On: signing in asks for your app\'s code.')}</p>
        ) : setup ? (
          <Form testid="totp-confirm" submit={L('Activar', 'Turn on')} onSubmit={async () => {
            await api('POST', '/me/totp/confirm', { code: f.code });
            const s = await api<any>('GET', '/session');
            store.trigger.signedIn({ session: s });
            setSetup(null);
            return L('Verificación en dos pasos activa.', 'Two-step verification is on.');
          }}>
            <p>{L('Escanea el código con tu app (Google Authenticator, 1Password, Authy…) o escribe la clave.', 'Scan the code with your app (Google Authenticator, 1Password, Authy…) or type the key.')}</p>
            <img class="qr" src={setup.qr_svg} alt={L('Código QR para tu app de autenticación', 'QR code for your authenticator app')} width={180} height={180} />
            <p><code data-testid="totp-secret">{setup.secret}</code></p>
            <Field label={L('Código de 6 dígitos', '6-digit code')} name="totp" inputmode="numeric" autocomplete="one-time-code" required onInput={(v) => (f.code = v)} testid="totp-setup-code" />
          </Form>
        ) : (
          <button type="button" class="btn primary" data-testid="totp-begin" onClick={async () => setSetup(await api('POST', '/me/totp'))}>
            {L('Configurar app de autenticación', 'Set up an authenticator app')}
          </button>
        )}
      </Card>
      <Card title={L('Contraseña', 'Password')}>
        <PasswordForm />
      </Card>
    </>
  );
}

function PasswordForm() {
  const f = useFields({ current: '', next: '' });
  return (
    <Form submit={L('Cambiar contraseña', 'Change password')} onSubmit={async () => {
      await api('POST', '/me/password', { current_password: f.current, new_password: f.next });
      return L('Contraseña cambiada.', 'Password changed.');
    }}>
      <Field label={L('Contraseña actual', 'Current password')} name="current-password" type="password" autocomplete="current-password" required onInput={(v) => (f.current = v)} />
      <Field label={L('Nueva contraseña (10 o más)', 'New password (10 or more)')} name="new-password" type="password" autocomplete="new-password" required onInput={(v) => (f.next = v)} />
    </Form>
  );
}

export function Audit(_p: ViewProps) {
  const log = useLoad(() => api<{ data: any[] }>('GET', '/audit?limit=100'));
  return (
    <>
      <h1>{L('Bitácora', 'Audit log')}</h1>
      <Loading state={log} />
      {log.data ? (
        <Table testid="audit" rows={log.data.data} cols={[
          { label: L('Fecha', 'Date'), get: (e) => when(e.created_at) },
          { label: L('Quién', 'Who'), get: (e) => e.actor_email },
          { label: L('Acción', 'Action'), get: (e) => <code>{e.action}</code> },
          { label: L('Objeto', 'Object'), get: (e) => e.target ?? '—' },
          { label: 'IP', get: (e) => e.ip ?? '—' },
        ]} />
      ) : null}
    </>
  );
}

const fileB64 = (f: File) => new Promise<string>((ok, ko) => {
  const r = new FileReader();
  r.onload = () => ok(String(r.result).replace(/^data:[^,]*,/, ''));
  r.onerror = () => ko(r.error);
  r.readAsDataURL(f);
});

export function Fiscal(_p: ViewProps) {
  const prof = useLoad(() => api<any>('GET', '/v1/fiscal_profile').catch(() => null));
  const v = useFields<Record<string, any>>({});
  const files = useFields<{ cer?: File; key?: File; password?: string }>({});
  const mode = useStore((c) => c.mode);
  const p = prof.data ?? {};
  return (
    <>
      <h1>{L('Perfil fiscal y CSD', 'Tax profile and CSD')}</h1>
      <Loading state={prof} />
      {prof.data ? <Card title={L('Actual', 'Current')}><Dl items={[['RFC', p.rfc], [L('Nombre', 'Name'), p.nombre], [L('Régimen', 'Regime'), p.regimen_fiscal], ['CP', p.cp], ['PAC', p.pac_provider], ['CSD', p.csd ? `${p.csd.certificate_number ?? ''} ${L('vence', 'expires')} ${when(p.csd.valid_to)}` : '—']]} /></Card> : null}
      {!prof.loading ? (
        <Card title={L('Editar', 'Edit')}>
          <Form testid="fiscal-form" submit={L('Guardar', 'Save')} onSubmit={async () => {
            const body: Record<string, unknown> = { rfc: p.rfc, nombre: p.nombre, regimen_fiscal: p.regimen_fiscal, cp: p.cp, pac_provider: p.pac_provider ?? (mode === 'live' ? 'finkok' : 'sim'), ...v };
            if (files.cer && files.key) body.csd = { cer_base64: await fileB64(files.cer), key_base64: await fileB64(files.key), password: files.password ?? '' };
            await api('PUT', '/v1/fiscal_profile', body);
            prof.reload();
            return L('Perfil fiscal guardado.', 'Tax profile saved.');
          }}>
            <Field label="RFC" name="rfc" value={p.rfc} onInput={(x) => (v.rfc = x)} />
            <Field label={L('Nombre o razón social', 'Legal name')} name="nombre" value={p.nombre} onInput={(x) => (v.nombre = x)} />
            <Field label={L('Régimen fiscal (clave)', 'Tax regime (key)')} name="regimen" value={p.regimen_fiscal} onInput={(x) => (v.regimen_fiscal = x)} />
            <Field label={L('Código postal de expedición', 'Issuing postal code')} name="cp" value={p.cp} inputmode="numeric" onInput={(x) => (v.cp = x)} />
            <div class="field"><label for="f-cer">{L('Certificado (.cer)', 'Certificate (.cer)')}</label><input id="f-cer" type="file" accept=".cer" onChange={(e) => (files.cer = (e.target as HTMLInputElement).files?.[0])} /></div>
            <div class="field"><label for="f-key">{L('Llave privada (.key)', 'Private key (.key)')}</label><input id="f-key" type="file" accept=".key" onChange={(e) => (files.key = (e.target as HTMLInputElement).files?.[0])} /></div>
            <Field label={L('Contraseña de la llave', 'Key password')} name="csd-password" type="password" autocomplete="off" onInput={(x) => (files.password = x)} />
          </Form>
        </Card>
      ) : null}
    </>
  );
}

export function Checkout(_p: ViewProps) {
  const s = useLoad(() => api<any>('GET', '/v1/checkout_settings'));
  const v = useFields<Record<string, any>>({});
  return (
    <>
      <h1>{L('Checkout: marca y orígenes', 'Checkout: branding and origins')}</h1>
      <Loading state={s} />
      {s.data ? (
        <Form testid="checkout-form" submit={L('Guardar', 'Save')} onSubmit={async () => {
          const body: Record<string, unknown> = {};
          if (v.logo_url !== undefined) body.logo_url = v.logo_url || null;
          if (v.privacy_url !== undefined) body.privacy_url = v.privacy_url || null;
          if (v.terms_url !== undefined) body.terms_url = v.terms_url || null;
          if (v.origins !== undefined) body.allowed_origins = v.origins.trim() ? v.origins.split(/[\s,]+/).filter(Boolean) : null;
          if (v.tips !== undefined) body.tips_enabled = v.tips;
          await api('PUT', '/v1/checkout_settings', body);
          s.reload();
          return L('Checkout guardado.', 'Checkout saved.');
        }}>
          {s.data.logo_url ? <img class="logo" src={s.data.logo_url.startsWith('data:') ? s.data.logo_url : ''} alt={L('Logo actual', 'Current logo')} /> : null}
          <Field label={L('Logo (URL https)', 'Logo (https URL)')} name="logo" value={s.data.logo_url?.startsWith('https:') ? s.data.logo_url : ''} onInput={(x) => (v.logo_url = x)} />
          <Field label={L('Aviso de privacidad (URL)', 'Privacy notice (URL)')} name="privacy" value={s.data.privacy_url ?? ''} onInput={(x) => (v.privacy_url = x)} />
          <Field label={L('Términos (URL)', 'Terms (URL)')} name="terms" value={s.data.terms_url ?? ''} onInput={(x) => (v.terms_url = x)} />
          <Field label={L('Orígenes permitidos (separados por espacio)', 'Allowed origins (space separated)')} name="origins" value={(s.data.allowed_origins ?? []).join(' ')} onInput={(x) => (v.origins = x)} />
          <label class="check"><input type="checkbox" checked={s.data.tips_enabled !== false} onChange={(e) => (v.tips = (e.target as HTMLInputElement).checked)} />{L('Ofrecer propina', 'Offer a tip')}</label>
        </Form>
      ) : null}
    </>
  );
}

export function Routing(_p: ViewProps) {
  const c = useLoad(() => api<any>('GET', '/v1/routing/connectors'));
  const sc = useLoad(() => api<any>('GET', '/v1/routing/scores').catch(() => null));
  const sav = useLoad(() => api<any>('GET', '/v1/reports/savings').catch(() => null));
  return (
    <>
      <h1>{L('Ruteo y comisiones', 'Routing and fees')}</h1>
      <Loading state={c} />
      {c.data ? (
        <Table testid="connectors" rows={c.data.data ?? []} cols={[
          { label: L('Conector', 'Connector'), get: (x) => <span data-testid="connector-key">{x.connector_key}{x.default ? L(' (predeterminado)', ' (default)') : ''}</span> },
          { label: L('Estado', 'Status'), get: (x) => <Status s={x.enabled === false ? 'disabled' : 'active'} /> },
          { label: L('Comisión por método', 'Fee by method'), get: (x) => Object.entries(x.fees ?? {}).map(([m, f]: [string, any]) => `${m} ${(f.bps / 100).toFixed(2)} % + ${money(f.fixed_minor)}`).join('; ') || '—' },
        ]} />
      ) : null}
      {sav.data ? (
        <Card title={L('Ahorro de los últimos 30 días', 'Savings of the last 30 days')}>
          <Dl items={[
            [L('Por ruteo', 'By routing'), money(sav.data.routing_saved_minor, sav.data.currency)],
            [L('Por reintentos en otro conector', 'By retries on another connector'), money(sav.data.retry_recovered_minor, sav.data.currency)],
            [L('Por cobranza (dunning)', 'By dunning'), money(sav.data.dunning_recovered_minor, sav.data.currency)],
            ['Total', <strong>{money(sav.data.total_minor, sav.data.currency)}</strong>],
          ]} />
        </Card>
      ) : null}
      {sc.data ? <Card title={L('Puntajes', 'Scores')}><Json value={sc.data} /></Card> : null}
    </>
  );
}

export function TestClock(_p: ViewProps) {
  const mode = useStore((c) => c.mode);
  const clock = useLoad(() => (mode === 'test' ? api<any>('GET', '/v1/test/clock') : Promise.resolve(null)));
  const f = useFields({ seconds: '3600' });
  if (mode === 'live') return <Empty what={L('El reloj de prueba existe solo en modo de prueba.', 'The test clock exists in test mode only.')} />;
  return (
    <>
      <h1>{L('Reloj de prueba', 'Test clock')}</h1>
      <Loading state={clock} />
      {clock.data ? <Dl items={[[L('Hora del reloj', 'Clock time'), <span data-testid="clock-now">{when(clock.data.now)}</span>], [L('Adelanto sobre la hora real', 'Ahead of real time'), `${Math.max(0, Math.round((Date.parse(clock.data.now) - Date.now()) / 60_000))} min`]]} /> : null}
      <Form testid="clock-form" submit={L('Adelantar', 'Advance')} onSubmit={async () => {
        await api('POST', '/v1/test/clock/advance', { seconds: Number(f.seconds) });
        clock.reload();
        return L('Reloj adelantado: los temporizadores vencidos corren ahora.', 'Clock advanced: due timers run now.');
      }}>
        <Field label={L('Segundos', 'Seconds')} name="seconds" type="number" value={f.seconds} min="1" onInput={(x) => (f.seconds = x)} />
      </Form>
    </>
  );
}

export function Balance(_p: ViewProps) {
  const b = useLoad(() => api<any>('GET', '/v1/balance'));
  // What the connectors owe the merchant (GET /v1/balance): available once past each connector's
  // settlement delay, pending before; one figure per currency, then per connector.
  const total = (xs: Array<{ currency: string; amount_minor: number }> | undefined) => (xs?.length ? xs.map((x) => money(x.amount_minor, x.currency)).join(' · ') : money(0));
  const by: any[] = b.data?.by_connector ?? [];
  return (
    <>
      <h1>{L('Saldo', 'Balance')}</h1>
      <Loading state={b} />
      {b.data ? (
        <Card title={L(`Al ${when(b.data.as_of)}`, `As of ${when(b.data.as_of)}`)}>
          <Dl items={[
            [L('Disponible', 'Available'), <strong data-testid="balance-available">{total(b.data.available)}</strong>],
            [L('Por liquidar', 'Pending'), <span data-testid="balance-pending">{total(b.data.pending)}</span>],
          ]} />
          {by.length ? (
            <>
              <Bars title={L('Por conector', 'By connector')} labels={by.map((x) => x.connector_key)} series={[
                { name: L('Disponible', 'Available'), values: by.map((x) => x.available_minor), color: '#1f7a4d' },
                { name: L('Por liquidar', 'Pending'), values: by.map((x) => x.pending_minor), color: '#b7791f' },
              ]} />
              <Table testid="balance-connectors" rows={by} cols={[
                { label: L('Conector', 'Connector'), get: (x) => x.connector_key },
                { label: L('Disponible', 'Available'), get: (x) => money(x.available_minor, x.currency), cls: 'num' },
                { label: L('Por liquidar', 'Pending'), get: (x) => money(x.pending_minor, x.currency), cls: 'num' },
                { label: L('Liquida a', 'Settles after'), get: (x) => (x.settlement_delay_days === 1 ? L('1 día', '1 day') : L(`${x.settlement_delay_days} días`, `${x.settlement_delay_days} days`)) },
              ]} />
            </>
          ) : <p class="muted">{L('Aún no hay cobros por liquidar.', 'No charges to settle yet.')}</p>}
        </Card>
      ) : null}
    </>
  );
}
