// The merchant portal (issue 29; docs/portal.md): one page, its screens chosen by the URL's hash
// (#/payments, #/payments/<id>…), Spanish by default with English, phone-first. Preact renders,
// @xstate/store holds the client state (state.ts), uPlot draws the charts, esbuild bundles it all at
// build time (ops/build-web.mjs). It calls the same operations as /v1 (api.ts).
import 'uplot/dist/uPlot.min.css';
import './portal.css';
import { render } from 'preact';
import { useEffect } from 'preact/hooks';
import { api } from './api.js';
import { go, store, useStore, type Session } from './state.js';
import { L } from './ui.js';
import { SignIn } from './screens/auth.js';
import { SCREENS, NAV, can, scopeOf } from './screens/index.js';

function Header({ s }: { s: Session }) {
  const mode = useStore((c) => c.mode);
  const locale = useStore((c) => c.locale);
  return (
    <header class={`top ${mode}`}>
      <a class="brand" href="#/">Orquesta</a>
      <span class="tenant" data-testid="tenant-name">{s.tenant.name}</span>
      <form
        class="search"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          const q = ((e.currentTarget as HTMLFormElement).elements.namedItem('q') as HTMLInputElement).value.trim();
          go(`/payments?q=${encodeURIComponent(q)}`);
        }}
      >
        <label for="global-q" class="sr-only">{L('Buscar pagos', 'Search payments')}</label>
        <input id="global-q" name="q" type="search" placeholder={L('Buscar: id, W-XXXXX, monto, correo', 'Search: id, W-XXXXX, amount, email')} data-testid="global-search" />
      </form>
      <div class="toggles">
        <button
          type="button"
          class={`mode-toggle ${mode}`}
          role="switch"
          aria-checked={mode === 'live'}
          data-testid="mode-toggle"
          onClick={() => store.trigger.setMode({ mode: mode === 'live' ? 'test' : 'live' })}
        >
          {mode === 'live' ? L('Modo real', 'Live mode') : L('Modo de prueba', 'Test mode')}
        </button>
        <button type="button" class="btn small" data-testid="locale-toggle" onClick={() => {
          // Kept in this browser and on the member (PATCH /portal/api/me), so another device signs in in it too.
          const next = locale === 'es' ? 'en' : 'es';
          store.trigger.setLocale({ locale: next });
          void api('PATCH', '/me', { locale: next }).catch(() => undefined);
        }}>
          {locale === 'es' ? 'English' : 'Español'}
        </button>
        <button
          type="button"
          class="btn small"
          data-testid="sign-out"
          onClick={async () => {
            await api('DELETE', '/session').catch(() => undefined);
            store.trigger.signedOut();
          }}
        >
          {L('Salir', 'Sign out')}
        </button>
      </div>
    </header>
  );
}

function Nav({ route, scopes }: { route: string; scopes: string[] }) {
  return (
    <nav class="side" aria-label={L('Secciones', 'Sections')}>
      {NAV.map((g) => ({ ...g, items: g.items.filter((i) => can(scopes, i.scope)) })).filter((g) => g.items.length).map((g) => (
        <div class="group">
          <h3>{L(g.es, g.en)}</h3>
          <ul>
            {g.items.map((i) => (
              <li>
                <a href={`#${i.path}`} aria-current={route === i.path || route.startsWith(`${i.path}/`) || route.startsWith(`${i.path}?`) ? 'page' : undefined} data-testid={`nav-${i.path.slice(1).replace(/\//g, '-') || 'home'}`}>
                  {L(i.es, i.en)}
                </a>
              </li>
            ))}
          </ul>
        </div>
      ))}
    </nav>
  );
}

function App() {
  const session = useStore((c) => c.session);
  const checked = useStore((c) => c.checked);
  const route = useStore((c) => c.route);
  const mode = useStore((c) => c.mode);
  const notice = useStore((c) => c.notice);
  useStore((c) => c.locale);
  useEffect(() => {
    api<Session>('GET', '/session').then(
      (s) => store.trigger.signedIn({ session: s }),
      () => store.trigger.signedOut(),
    );
  }, []);
  useEffect(() => {
    document.title = `Orquesta · ${L('Portal', 'Dashboard')}`;
  });
  if (!checked) return <p class="muted center">{L('Cargando…', 'Loading…')}</p>;
  const open = /^\/(reset|invitation)\//.test(route);
  if (!session || open) return <SignIn route={route} />;
  const [path, query = ''] = route.split('?');
  const screen = SCREENS.find((s) => s.match.test(path)) ?? SCREENS[0];
  const params = Object.fromEntries(new URLSearchParams(query));
  const m = screen.match.exec(path)!;
  const View = session.totp_setup_required ? SCREENS.find((s) => s.match.test('/settings/security'))!.view : screen.view;
  return (
    <div class={`shell ${mode}`}>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>{L('Saltar al contenido', 'Skip to content')}</a>
      <Header s={session} />
      {mode === 'test' ? <div class="test-banner" data-testid="test-banner">{L('Datos de prueba: nada de esto mueve dinero real.', 'Test data: nothing here moves real money.')}</div> : null}
      <div class="body">
        <Nav route={route} scopes={session.member.scopes} />
        <main id="main" tabIndex={-1}>
          {session.totp_setup_required ? <p class="error" role="alert">{L('Tu equipo exige verificación en dos pasos: configúrala para continuar.', 'Your team requires two-step sign-in: set it up to continue.')}</p> : null}
          {notice ? (
            <div class={`notice ${notice.kind}`} role="status" data-testid="notice">
              {notice.text}
              <button type="button" class="btn small" aria-label={L('Cerrar aviso', 'Close notice')} onClick={() => store.trigger.clearNotice()}>×</button>
            </div>
          ) : null}
          {can(session.member.scopes, scopeOf(path)) ? (
            <View id={m[1]} params={params} session={session} />
          ) : (
            <>
              <h1>{L('Sin acceso', 'No access')}</h1>
              <p data-testid="no-access">{L('Tu rol no da acceso a esta sección; pide a quien administra el equipo que te dé el permiso.', 'Your role gives no access to this section; ask a team admin for the permission.')}</p>
            </>
          )}
        </main>
      </div>
    </div>
  );
}

document.documentElement.lang = store.getSnapshot().context.locale;
render(<App />, document.getElementById('app')!);
