// Documentation served by the API itself: the OpenAPI description and the error catalog page.
import { errorDocsHtml } from '../error-docs.js';
import { buildOpenApi } from '../openapi.js';
import { defineRoute, type RouteDef } from '../route.js';

export function docRoutes(all: () => RouteDef[], baseUrl: string): RouteDef[] {
  let openapi: string | undefined;
  let errors: string | undefined;
  return [
    defineRoute({
      method: 'GET',
      path: '/openapi/v1.json',
      auth: 'none',
      summary: 'This OpenAPI 3.1.1 description',
      tags: ['Operations'],
      responses: { 200: { description: 'OpenAPI document', schema: { type: 'object' } } },
      handler: () => ({ status: 200, contentType: 'application/json', text: (openapi ??= JSON.stringify(buildOpenApi(all(), baseUrl))) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/docs/errors',
      auth: 'none',
      summary: 'Every error code, with an anchor #err-<code> each',
      tags: ['Operations'],
      responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
      handler: () => ({ status: 200, contentType: 'text/html', text: (errors ??= errorDocsHtml()) }),
    }),
  ];
}
