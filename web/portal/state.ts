// The portal's client state in one @xstate/store store: who is signed in, the test/live toggle, the
// language, the screen (from the URL's hash) and the last notice. Screens read it with useStore and
// change it only through its events, so every change of what the member sees has one name.
import { createStore } from '@xstate/store';
import { useEffect, useState } from 'preact/hooks';

export interface Member { id: string; email: string; name: string; role: string; scopes: string[]; totp_enabled: boolean; locale: 'es' | 'en' }
export interface Session { member: Member; tenant: { id: string; name: string }; csrf_token: string; totp_setup_required: boolean }
export type Mode = 'test' | 'live';

const savedMode = (): Mode => (sessionStorage.getItem('orq_mode') === 'live' ? 'live' : 'test');
const savedLocale = (): 'es' | 'en' => (localStorage.getItem('orq_locale') === 'en' ? 'en' : 'es');

export const store = createStore({
  context: {
    session: null as Session | null,
    /** The sign-in step: 'password', then 'totp' when the member has a second factor. */
    signInStep: 'password' as 'password' | 'totp',
    checked: false,
    mode: savedMode(),
    locale: savedLocale(),
    route: location.hash.replace(/^#/, '') || '/',
    notice: null as null | { kind: 'ok' | 'error'; text: string },
    /** Bumped after a change so that lists read again. */
    version: 0,
  },
  on: {
    signedIn: (c, e: { session: Session }) => {
      // The member's language (kept on the member) wins over this browser's.
      const locale = e.session.member.locale ?? c.locale;
      localStorage.setItem('orq_locale', locale);
      document.documentElement.lang = locale;
      return { ...c, session: e.session, signInStep: 'password' as const, checked: true, locale };
    },
    totpStep: (c) => ({ ...c, signInStep: 'totp' as const }),
    signedOut: (c) => ({ ...c, session: null, signInStep: 'password' as const, checked: true }),
    setMode: (c, e: { mode: Mode }) => {
      sessionStorage.setItem('orq_mode', e.mode);
      return { ...c, mode: e.mode, version: c.version + 1 };
    },
    setLocale: (c, e: { locale: 'es' | 'en' }) => {
      localStorage.setItem('orq_locale', e.locale);
      document.documentElement.lang = e.locale;
      return { ...c, locale: e.locale };
    },
    navigate: (c, e: { route: string }) => ({ ...c, route: e.route || '/', notice: null }),
    notify: (c, e: { kind: 'ok' | 'error'; text: string }) => ({ ...c, notice: { kind: e.kind, text: e.text } }),
    clearNotice: (c) => ({ ...c, notice: null }),
    changed: (c) => ({ ...c, version: c.version + 1 }),
  },
});

export type Ctx = ReturnType<typeof store.getSnapshot>['context'];

/** A value of the store, re-rendering the component when it changes. */
export function useStore<T>(select: (c: Ctx) => T): T {
  const [v, set] = useState(() => select(store.getSnapshot().context));
  useEffect(() => {
    const sub = store.subscribe((s) => set(() => select(s.context)));
    set(() => select(store.getSnapshot().context));
    return () => sub.unsubscribe();
  }, []);
  return v;
}

addEventListener('hashchange', () => store.trigger.navigate({ route: location.hash.replace(/^#/, '') }));
export const go = (route: string) => {
  location.hash = route;
};
