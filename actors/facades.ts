// The capabilities written as plain functions (`fn(deps, ...args)`), grouped per resource. ops/app.ts
// binds them to the process's dependencies once (kernel/facade.ts bindGroups), and the edge calls
// them as `ctx.deps.<group>.<command>(...)`: a handler never holds a pool. Capabilities written as
// classes (PaymentIntents, Refunds, Invoices, ...) are facades already and are given as they are.
// A new resource whose commands are plain functions adds its group here.
import { nowFor } from '../kernel/clock.js';
import { onSql } from '../kernel/facade.js';
import type { Principal } from '../kernel/principal.js';
import { balance } from './balance.js';
import { getStatement, importStatement, listLines, listStatements, reconciliation, rematchStatement } from './bank-statements.js';
import { checkoutConfig, checkReturnUrl, getCheckoutSettings, publicConfirm, publicGet, putCheckoutSettings, threeDsReturnUrl } from './checkout.js';
import { createCustomer, deleteCustomer, getCustomer, listCustomers, updateCustomer } from './customers.js';
import { listDisputes } from './disputes.js';
import { listEvents } from './events.js';
import { getFiscalProfile, issuerBySlug, putFiscalProfile, type FiscalDeps } from './fiscal-profile.js';
import { complete3ds, simulateInbound } from './inbound.js';
import { reviewView } from './payment-intents.js';
import { createLink, demoTenantId, getLink, intentForLink, listLinks, payableIntent } from './payment-links.js';
import { anomalies } from './reports/anomalies.js';
import { cashCut } from './reports/cash-cut.js';
import { feeLeakage, savings } from './reports/contracts.js';
import { closePeriod, getAccountMapping, polizas, putAccountMapping, trialBalance } from './reports/ledger.js';
import { paymentsPage } from './reports/payments.js';
import { createRule } from './risk.js';
import { createApiKey, createTenant, listApiKeys, revokeApiKey, updateSettings } from './tenants.js';
import { createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, rotateSecret } from './webhook-endpoints.js';
import type { FiscalProfileBody } from '../schemas/invoices.js';
import type { Logger } from '../kernel/log.js';

export const commandGroups = {
  tenants: { create: createTenant, createApiKey, listApiKeys, revokeApiKey, updateSettings },
  customers: { create: createCustomer, get: getCustomer, list: listCustomers, update: updateCustomer, delete: deleteCustomer },
  webhookEndpoints: { create: createEndpoint, list: listEndpoints, get: getEndpoint, delete: deleteEndpoint, rotateSecret },
  events: { list: listEvents },
  risk: {
    review: onSql(reviewView),
    createRule: onSql(createRule),
  },
  disputes: { list: onSql(listDisputes) },
  checkout: {
    get: publicGet,
    confirm: publicConfirm,
    config: checkoutConfig,
    checkReturnUrl,
    threeDsReturnUrl,
    complete3ds,
    getSettings: getCheckoutSettings,
    putSettings: putCheckoutSettings,
  },
  links: {
    create: onSql(createLink),
    list: onSql(listLinks),
    get: onSql(getLink),
    demoTenantId: onSql(demoTenantId),
    intentForLink,
    payableIntent,
  },
  fiscalProfile: {
    get: getFiscalProfile,
    /** Stored as of the tenant's clock (its test clock in test mode). */
    put: async (d: FiscalDeps & { log: Logger }, p: Principal, body: FiscalProfileBody) => putFiscalProfile(d, p, body, await nowFor(d.sql, p.tenantId, p.livemode)),
    issuerBySlug,
  },
  statements: { import: importStatement, list: listStatements, get: getStatement, lines: listLines, reconciliation, rematch: rematchStatement },
  reports: { cashCut, savings, feeLeakage, anomalies, payments: paymentsPage, polizas, trialBalance, closePeriod, getAccountMapping, putAccountMapping },
  balance: { get: balance },
  inbound: { simulate: simulateInbound },
};
