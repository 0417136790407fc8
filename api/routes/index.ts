// The route table: every route the API serves, in one list.
import type { Config } from '../../ops/config.js';
import type { RouteDef } from '../route.js';
import { adminRoutes } from './admin.js';
import { customerRoutes } from './customers.js';
import { docRoutes } from './docs.js';
import { opsRoutes } from './ops.js';
import { paymentIntentRoutes } from './payment-intents.js';
import { webhookRoutes } from './webhooks.js';
import { refundRoutes } from './refunds.js';
import { publicRoutes } from './public.js';
import { invoiceRoutes } from './invoices.js';
import { reportRoutes } from './reports.js';
import { connectRoutes } from './connect.js';
import { billerRoutes } from './billers.js';
import { bankStatementRoutes } from './bank-statements.js';
import { receivableRoutes } from './receivables.js';
import { balanceRoutes, cardWebhookRoutes, routingRoutes } from './routing.js';
import { signupRoutes } from './signup.js';
import { testHelperRoutes } from './test-helpers.js';

export function allRoutes(config: Pick<Config, 'publicBaseUrl'>): RouteDef[] {
  const routes: RouteDef[] = [];
  routes.push(...opsRoutes, ...adminRoutes, ...customerRoutes, ...paymentIntentRoutes, ...webhookRoutes, ...refundRoutes, ...publicRoutes);
  routes.push(...invoiceRoutes);
  routes.push(...reportRoutes);
  routes.push(...connectRoutes);
  routes.push(...billerRoutes);
  routes.push(...bankStatementRoutes);
  routes.push(...receivableRoutes);
  routes.push(...routingRoutes, ...cardWebhookRoutes, ...signupRoutes, ...balanceRoutes);
  routes.push(...testHelperRoutes);
  routes.push(...docRoutes(() => routes, config.publicBaseUrl));
  return routes;
}
