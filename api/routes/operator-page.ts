// The operator console's page (docs/operator.md): one HTML page and its script and styles, served
// from web/operator (plain files, no build step). Everything it shows and does goes through the
// operator routes (/portal/api/operator/*) and the portal's sign-in (/portal/api/session*), under
// the portal's session cookie (Path=/portal) and its strict CSP.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError } from '../../kernel/errors.js';
import { webDir as webRoot } from '../../kernel/paths.js';
import { defineRoute, type RouteDef } from '../route.js';
import { SECURITY_HEADERS } from './portal.js';

const HTML = `<!doctype html>
<html lang="es"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Orquesta · Consola de operación</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/portal/operator/assets/operator.css"></head>
<body><div id="app"><noscript>La consola necesita JavaScript.</noscript></div>
<script type="module" src="/portal/operator/assets/operator.js"></script></body></html>`;
const FILES: Record<string, string> = { 'operator.js': 'text/javascript; charset=utf-8', 'operator.css': 'text/css; charset=utf-8' };
const cache = new Map<string, string>();
const webDir = join(webRoot, 'operator');

export const operatorPageRoutes: RouteDef[] = [
  defineRoute({
    method: 'GET', path: '/portal/operator', auth: 'none', hidden: true, rateLimitExempt: true, tags: ['Operator console'],
    summary: 'The operator console (a page)', responses: { 200: { description: 'HTML', contentType: 'text/html' } },
    handler: () => ({ status: 200, contentType: 'text/html; charset=utf-8', text: HTML, headers: SECURITY_HEADERS }),
  }),
  defineRoute({
    method: 'GET', path: '/portal/operator/assets/{file}', auth: 'none', hidden: true, rateLimitExempt: true, tags: ['Operator console'],
    summary: "The console's script and styles", responses: { 200: { description: 'A file' } },
    handler: (ctx) => {
      const type = FILES[ctx.params.file ?? ''];
      if (!type) throw new ApiError('route.not_found');
      let text = cache.get(ctx.params.file!);
      if (text === undefined) cache.set(ctx.params.file!, (text = readFileSync(join(webDir, ctx.params.file!), 'utf8')));
      return { status: 200, contentType: type, text, headers: { 'Cache-Control': 'no-cache', 'X-Content-Type-Options': 'nosniff' } };
    },
  }),
];
