// Signing in: email and password, then the authenticator's code when the member has one; forgot
// password (a link by email); a reset link's new password; an invitation's account.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { go, store, useStore, type Session } from '../state.js';
import { Field, Form, L, useFields } from '../ui.js';

async function enter() {
  const s = await api<Session>('GET', '/session');
  store.trigger.signedIn({ session: s });
  go('/');
}

export function SignIn({ route }: { route: string }) {
  const step = useStore((c) => c.signInStep);
  const locale = useStore((c) => c.locale);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [forgot, setForgot] = useState(false);
  const reset = /^\/reset\/(.+)$/.exec(route)?.[1];
  const invitation = /^\/invitation\/(.+)$/.exec(route)?.[1];
  const lang = (
    <button type="button" class="btn small" onClick={() => store.trigger.setLocale({ locale: locale === 'es' ? 'en' : 'es' })}>
      {locale === 'es' ? 'English' : 'Español'}
    </button>
  );
  const f = useFields({ name: '', pw: '' });
  let body;
  if (invitation) {
    body = (
      <Form testid="accept-form" submit={L('Crear mi cuenta', 'Create my account')} onSubmit={async () => {
        await api('POST', '/invitations/accept', { token: invitation, name: f.name, password: f.pw });
        await enter();
      }}>
        <h1>{L('Únete a tu equipo', 'Join your team')}</h1>
        <Field label={L('Tu nombre', 'Your name')} name="name" required autocomplete="name" onInput={(v) => (f.name = v)} />
        <Field label={L('Contraseña (10 caracteres o más)', 'Password (10 characters or more)')} name="new-password" type="password" required autocomplete="new-password" onInput={(v) => (f.pw = v)} />
      </Form>
    );
  } else if (reset) {
    body = (
      <Form testid="reset-form" submit={L('Guardar contraseña', 'Save password')} onSubmit={async () => {
        await api('POST', '/password_resets/confirm', { token: reset, password: f.pw });
        go('/');
        return L('Contraseña cambiada: entra con ella.', 'Password changed: sign in with it.');
      }}>
        <h1>{L('Nueva contraseña', 'New password')}</h1>
        <Field label={L('Contraseña (10 caracteres o más)', 'Password (10 characters or more)')} name="new-password" type="password" required autocomplete="new-password" onInput={(v) => (f.pw = v)} />
      </Form>
    );
  } else if (forgot) {
    body = (
      <Form testid="forgot-form" submit={L('Enviar enlace', 'Send link')} onSubmit={async () => {
        await api('POST', '/password_resets', { email });
        setForgot(false);
        return L('Si el correo tiene cuenta, le enviamos un enlace (vale 30 minutos).', 'If the email has an account, a link is on its way (valid 30 minutes).');
      }}>
        <h1>{L('Recuperar contraseña', 'Reset password')}</h1>
        <Field label={L('Correo', 'Email')} name="email" type="email" required autocomplete="email" value={email} onInput={setEmail} />
      </Form>
    );
  } else if (step === 'totp') {
    body = (
      <Form testid="totp-form" submit={L('Verificar', 'Verify')} onSubmit={async () => {
        await api('POST', '/session/totp', { code });
        await enter();
      }}>
        <h1>{L('Verificación en dos pasos', 'Two-step verification')}</h1>
        <Field label={L('Código de 6 dígitos de tu app', '6-digit code from your app')} name="code" inputmode="numeric" autocomplete="one-time-code" required value={code} onInput={setCode} testid="totp-code" />
      </Form>
    );
  } else {
    body = (
      <Form testid="sign-in-form" submit={L('Entrar', 'Sign in')} onSubmit={async () => {
        const r = await api<{ stage: string }>('POST', '/session', { email, password });
        if (r.stage === 'totp') store.trigger.totpStep();
        else await enter();
      }}>
        <h1>{L('Entra a tu portal', 'Sign in to your dashboard')}</h1>
        <Field label={L('Correo', 'Email')} name="email" type="email" required autocomplete="username" value={email} onInput={setEmail} testid="email" />
        <Field label={L('Contraseña', 'Password')} name="password" type="password" required autocomplete="current-password" value={password} onInput={setPassword} testid="password" />
      </Form>
    );
  }
  const notice = useStore((c) => c.notice);
  return (
    <main class="auth" id="main">
      <div class="auth-card">
        <div class="brand-row"><span class="brand">Orquesta</span>{lang}</div>
        {notice ? <p class={`notice ${notice.kind}`} role="status">{notice.text}</p> : null}
        {body}
        {!reset && !invitation && step === 'password' ? (
          <button type="button" class="btn link" onClick={() => setForgot(!forgot)}>
            {forgot ? L('Volver', 'Back') : L('¿Olvidaste tu contraseña?', 'Forgot your password?')}
          </button>
        ) : null}
        <p class="muted small">{L('¿Sin cuenta? Regístrate con POST /public/signup (docs/signup.md).', 'No account? Sign up with POST /public/signup (docs/signup.md).')}</p>
      </div>
    </main>
  );
}
