// The portal's map (docs/portal.md; the design brief's sections): the menu and which screen a hash shows.
import type { FunctionComponent } from 'preact';
import type { Session } from '../state.js';
import { Home } from './home.js';
import { PaymentDetail, Payments, Refunds, Customers, CustomerDetail, Links, Disputes } from './payments.js';
import { Keys, Webhooks, Events } from './developers.js';
import { Team, Security, Audit, Fiscal, Checkout, Routing, TestClock, Balance } from './settings.js';
import { Terminals } from './terminals.js';
import { Invoices, Receivables, Reconciliation, StatementDetail, Reports, Payouts, SubMerchants, Services } from './finance.js';

export interface ViewProps { id?: string; params: Record<string, string>; session: Session }
export interface Screen { match: RegExp; view: FunctionComponent<ViewProps> }

export const SCREENS: Screen[] = [
  { match: /^\/?$/, view: Home },
  { match: /^\/payments\/([^/]+)$/, view: PaymentDetail },
  { match: /^\/payments$/, view: Payments },
  { match: /^\/refunds$/, view: Refunds },
  { match: /^\/disputes$/, view: Disputes },
  { match: /^\/customers\/([^/]+)$/, view: CustomerDetail },
  { match: /^\/customers$/, view: Customers },
  { match: /^\/links$/, view: Links },
  { match: /^\/receivables$/, view: Receivables },
  { match: /^\/invoices$/, view: Invoices },
  { match: /^\/reconciliation\/([^/]+)$/, view: StatementDetail },
  { match: /^\/reconciliation$/, view: Reconciliation },
  { match: /^\/reports$/, view: Reports },
  { match: /^\/payouts$/, view: Payouts },
  { match: /^\/submerchants$/, view: SubMerchants },
  { match: /^\/services$/, view: Services },
  { match: /^\/balance$/, view: Balance },
  { match: /^\/developers\/keys$/, view: Keys },
  { match: /^\/developers\/webhooks$/, view: Webhooks },
  { match: /^\/developers\/events$/, view: Events },
  { match: /^\/settings\/team$/, view: Team },
  { match: /^\/settings\/security$/, view: Security },
  { match: /^\/settings\/audit$/, view: Audit },
  { match: /^\/settings\/fiscal$/, view: Fiscal },
  { match: /^\/settings\/checkout$/, view: Checkout },
  { match: /^\/settings\/routing$/, view: Routing },
  { match: /^\/settings\/test-clock$/, view: TestClock },
  { match: /^\/settings\/terminals$/, view: Terminals },
];

interface Item { path: string; es: string; en: string; scope?: string }

/** Whether a member's scopes give a section (a :read scope is also given by its :write). */
export const can = (scopes: string[], need?: string) =>
  !need || scopes.includes('*') || scopes.includes(need) || (need.endsWith(':read') && scopes.includes(need.replace(':read', ':write')));

/** The scope the section of a path needs (its menu item's), for the screens reached by URL too. */
export function scopeOf(path: string): string | undefined {
  for (const g of NAV) for (const i of g.items) if (i.path !== '/' && (path === i.path || path.startsWith(`${i.path}/`))) return i.scope;
  return undefined;
}
export const NAV: Array<{ es: string; en: string; items: Item[] }> = [
  { es: 'Inicio', en: 'Home', items: [{ path: '/', es: 'Resumen', en: 'Overview' }] },
  {
    es: 'Pagos', en: 'Payments', items: [
      { path: '/payments', es: 'Pagos', en: 'Payments', scope: 'payments:read' },
      { path: '/refunds', es: 'Reembolsos', en: 'Refunds', scope: 'payments:read' },
      { path: '/disputes', es: 'Disputas', en: 'Disputes', scope: 'payments:read' },
      { path: '/customers', es: 'Clientes', en: 'Customers', scope: 'payments:read' },
      { path: '/links', es: 'Ligas de pago', en: 'Payment links', scope: 'payments:read' },
    ],
  },
  { es: 'Cobranza', en: 'Receivables', items: [{ path: '/receivables', es: 'Cuentas por cobrar', en: 'Receivables', scope: 'payments:read' }] },
  { es: 'Facturación', en: 'Invoicing', items: [{ path: '/invoices', es: 'Facturas', en: 'Invoices', scope: 'payments:read' }] },
  { es: 'Conciliación', en: 'Reconciliation', items: [{ path: '/reconciliation', es: 'Estados de cuenta', en: 'Bank statements', scope: 'reports:read' }] },
  { es: 'Contabilidad', en: 'Accounting', items: [{ path: '/reports', es: 'Reportes y pólizas', en: 'Reports and journals', scope: 'reports:read' }] },
  {
    es: 'Dispersión', en: 'Payouts', items: [
      { path: '/payouts', es: 'Transferencias', en: 'Payouts', scope: 'payments:read' },
      { path: '/submerchants', es: 'Subcomercios', en: 'Sub-merchants', scope: 'payments:read' },
      { path: '/balance', es: 'Saldo', en: 'Balance', scope: 'payments:read' },
    ],
  },
  { es: 'Servicios', en: 'Services', items: [{ path: '/services', es: 'Pagos de servicios y recargas', en: 'Bill payments and top-ups', scope: 'payments:read' }] },
  {
    es: 'Desarrolladores', en: 'Developers', items: [
      { path: '/developers/keys', es: 'Llaves API', en: 'API keys', scope: 'keys:manage' },
      { path: '/developers/webhooks', es: 'Webhooks', en: 'Webhooks', scope: 'webhooks:manage' },
      { path: '/developers/events', es: 'Eventos', en: 'Events', scope: 'payments:read' },
    ],
  },
  {
    es: 'Configuración', en: 'Settings', items: [
      { path: '/settings/team', es: 'Equipo y roles', en: 'Team and roles' },
      { path: '/settings/security', es: 'Seguridad (2FA)', en: 'Security (2FA)' },
      { path: '/settings/audit', es: 'Bitácora', en: 'Audit log', scope: 'audit:read' },
      { path: '/settings/fiscal', es: 'Perfil fiscal y CSD', en: 'Tax profile and CSD', scope: 'invoices:write' },
      { path: '/settings/checkout', es: 'Checkout', en: 'Checkout', scope: 'payments:write' },
      { path: '/settings/terminals', es: 'Terminales', en: 'Terminals' },
      { path: '/settings/routing', es: 'Ruteo y comisiones', en: 'Routing and fees', scope: 'payments:read' },
      { path: '/settings/test-clock', es: 'Reloj de prueba', en: 'Test clock', scope: 'payments:write' },
    ],
  },
];
