// The route table: every route the API serves, in one list. One file per resource in this folder.
import type { RouteDef } from '../route.js';
import { approvalRoutes } from './approvals.js';
import { balanceRoutes } from './balance.js';
import { bankStatementRoutes } from './bank-statements.js';
import { billerRoutes } from './billers.js';
import { cardWebhookRoutes } from './card-webhooks.js';
import { checkoutRoutes } from './checkout.js';
import { connectRoutes } from './connect.js';
import { customerRoutes } from './customers.js';
import { disputeRoutes } from './disputes.js';
import { docRoutes } from './docs.js';
import { fiscalProfileRoutes } from './fiscal-profile.js';
import { invoiceRoutes } from './invoices.js';
import { onboardingRoutes } from './onboarding.js';
import { opsRoutes } from './ops.js';
import { paymentIntentRoutes } from './payment-intents.js';
import { paymentLinkRoutes } from './payment-links.js';
import { paymentMethodRoutes } from './payment-methods.js';
import { payoutRoutes } from './payouts.js';
import { receivableRoutes } from './receivables.js';
import { rechargeRoutes } from './recharges.js';
import { refundRoutes } from './refunds.js';
import { reportRoutes } from './reports.js';
import { riskRoutes } from './risk.js';
import { routingRoutes } from './routing.js';
import { servicePaymentRoutes } from './service-payments.js';
import { signupRoutes } from './signup.js';
import { tenantRoutes } from './tenants.js';
import { testClockRoutes } from './test-clock.js';
import { testHelperRoutes } from './test-helpers.js';
import { webhookRoutes } from './webhooks.js';
import { portalRoutes } from './portal.js';
import { activityRoutes } from './activity.js';
import { bankLineRoutes } from './bank-lines.js';
import { portalApiRoutes } from './portal-api.js';
import { portalTerminalRoutes, terminalRoutes } from './terminals.js';
import { inspectRoutes, operatorRoutes } from './operator.js';
import { auditedAdminRoutes, operatorAdminRoutes, operatorConsoleRoutes } from './operator-console.js';
import { operatorPageRoutes } from './operator-page.js';

export function allRoutes(config: { publicBaseUrl: string }): RouteDef[] {
  const routes: RouteDef[] = [
    ...opsRoutes,
    ...tenantRoutes,
    ...customerRoutes,
    ...paymentIntentRoutes,
    ...testClockRoutes,
    ...riskRoutes,
    ...webhookRoutes,
    ...refundRoutes,
    ...approvalRoutes,
    ...paymentMethodRoutes,
    ...disputeRoutes,
    ...checkoutRoutes,
    ...paymentLinkRoutes,
    ...fiscalProfileRoutes,
    ...invoiceRoutes,
    ...reportRoutes,
    ...onboardingRoutes,
    ...connectRoutes,
    ...payoutRoutes,
    ...billerRoutes,
    ...servicePaymentRoutes,
    ...rechargeRoutes,
    ...bankStatementRoutes,
    ...receivableRoutes,
    ...routingRoutes,
    ...cardWebhookRoutes,
    ...signupRoutes,
    ...balanceRoutes,
    ...testHelperRoutes,
    ...terminalRoutes,
    ...operatorRoutes,
    ...inspectRoutes,
    ...operatorAdminRoutes,
    ...activityRoutes,
    ...bankLineRoutes,
  ];
  // The operator console: every /admin route again under /portal/api/operator with an operator's portal
  // session; /admin changes audited (api/routes/operator-console.ts, docs/operator.md).
  const consoleRoutes = operatorConsoleRoutes(routes);
  routes.splice(0, routes.length, ...auditedAdminRoutes(routes));
  routes.push(...consoleRoutes, ...operatorPageRoutes, ...portalTerminalRoutes);
  // The merchant portal: its own routes, and every /v1 route again under /portal/api with a session (docs/portal.md).
  routes.push(...portalRoutes, ...portalApiRoutes(routes));
  routes.push(...docRoutes(() => routes, config.publicBaseUrl));
  return routes;
}
