// Documentation served by the API itself: the OpenAPI description, the error catalog page and the
// rendered API reference (/docs/api: Swagger UI from the installed swagger-ui-dist package, no CDN).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
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
${link('/docs/api', 'API reference', 'every operation rendered from the OpenAPI description, with its bodies, answers and errors')}
${link('/openapi/v1.json', 'OpenAPI description', 'every route, its parameters, bodies, answers and error codes (OpenAPI 3.1.1)')}
${link('/docs/errors', 'Errors', 'every error code, its HTTP status and what to do about it')}
${link('/demo', 'Demo', 'create a test payment link and pay it in the browser (test mode)')}
${link('/status', 'Status', 'API, database and worker')}
</ul></body></html>`;
}

/** Swagger UI's files, read from the installed package (node_modules/swagger-ui-dist) once, when first asked. */
const swaggerDir = () => dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const REFERENCE_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; font-src 'self' data:; frame-ancestors 'none'; base-uri 'none'";
const REFERENCE_HTML = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Orquesta API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">
<link rel="stylesheet" href="/docs/api/swagger-ui.css"></head>
<body><div id="swagger-ui"></div><script src="/docs/api/swagger-ui-bundle.js"></script><script src="/docs/api/init.js"></script></body></html>`;
// No validator badge (it calls validator.swagger.io), no outside request at all: the document is ours.
const REFERENCE_INIT = `window.ui = SwaggerUIBundle({ url: '/openapi/v1.json', dom_id: '#swagger-ui', validatorUrl: null, deepLinking: true, docExpansion: 'list', defaultModelsExpandDepth: 0, filter: true });\n`;

function referenceAssets(): RouteDef[] {
  const files: Array<[string, string]> = [
    ['swagger-ui.css', 'text/css'],
    ['swagger-ui-bundle.js', 'application/javascript'],
  ];
  return files.map(([file, type]) => {
    let body: string | undefined;
    return defineRoute({
      method: 'GET',
      path: `/docs/api/${file}`,
      auth: 'none',
      hidden: true,
      summary: `Swagger UI's ${file} (from the installed swagger-ui-dist)`,
      tags: ['Operations'],
      responses: { 200: { description: file, contentType: type } },
      handler: () => ({ status: 200, contentType: type, text: (body ??= readFileSync(join(swaggerDir(), file), 'utf8')), headers: { 'Cache-Control': 'public, max-age=3600' } }),
    });
  });
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
      path: '/docs/api',
      auth: 'none',
      summary: 'The API reference: this OpenAPI description rendered (Swagger UI, served from the installed package)',
      tags: ['Operations'],
      responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
      handler: () => ({ status: 200, contentType: 'text/html', text: REFERENCE_HTML, headers: { 'Content-Security-Policy': REFERENCE_CSP } }),
    }),
    defineRoute({
      method: 'GET',
      path: '/docs/api/init.js',
      auth: 'none',
      hidden: true,
      summary: "The reference page's start script",
      tags: ['Operations'],
      responses: { 200: { description: 'script', contentType: 'application/javascript' } },
      handler: () => ({ status: 200, contentType: 'application/javascript', text: REFERENCE_INIT }),
    }),
    ...referenceAssets(),
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
