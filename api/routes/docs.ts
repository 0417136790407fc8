// Documentation served by the API itself: the OpenAPI description and the error catalog page.
import { errorDocsHtml } from '../error-docs.js';
import { buildOpenApi } from '../openapi.js';
import { defineRoute, type RouteDef } from '../route.js';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** `/` and `/docs`: where to go, for a person who opened the base URL in a browser. */
function indexHtml(baseUrl: string): string {
  const link = (path: string, text: string, note: string) => `<li><a href="${esc(path)}">${esc(text)}</a> <span>${esc(note)}</span></li>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Orquesta API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1c1c1c}
li{margin:.4rem 0}span{color:#555}code{background:#f3f3f3;padding:0 .2rem;border-radius:3px}</style></head>
<body><h1>Orquesta API</h1>
<p>Payment orchestration for Mexican businesses. The API lives under <code>${esc(baseUrl)}/v1</code> and takes
<code>Authorization: Bearer sk_test_…</code> (or <code>sk_live_…</code>).</p>
<ul>
${link('/openapi/v1.json', 'OpenAPI description', 'every route, its parameters, bodies, answers and error codes (OpenAPI 3.1.1)')}
${link('/docs/errors', 'Errors', 'every error code, its HTTP status and what to do about it')}
${link('/demo', 'Demo', 'create a test payment link and pay it in the browser (test mode)')}
${link('/status', 'Status', 'API, database and worker')}
</ul></body></html>`;
}

export function docRoutes(all: () => RouteDef[], baseUrl: string): RouteDef[] {
  let openapi: string | undefined;
  let errors: string | undefined;
  const index = indexHtml(baseUrl);
  const home = (path: string) =>
    defineRoute({
      method: 'GET',
      path,
      auth: 'none',
      summary: path === '/' ? 'A small HTML index: API, OpenAPI, errors, demo' : 'The same HTML index as `/`',
      tags: ['Operations'],
      responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
      handler: () => ({ status: 200, contentType: 'text/html', text: index }),
    });
  return [
    home('/'),
    home('/docs'),
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
