// /docs/errors: one page, generated from the catalog, with an anchor #err-<code> per code.
import { ERROR_CATALOG, ERROR_CODES } from '../kernel/error-catalog.js';
import { statusForCode } from '../kernel/errors.js';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const md = (s: string) => esc(s).replace(/`([^`]+)`/g, '<code>$1</code>');

export function errorDocsHtml(): string {
  const groups = new Map<string, typeof ERROR_CODES>();
  for (const code of ERROR_CODES) {
    const g = code.includes('.') ? code.split('.')[0] : 'general';
    groups.set(g, [...(groups.get(g) ?? []), code]);
  }
  const sections = [...groups]
    .map(([g, codes]) => {
      const items = codes
        .map((c) => {
          const e = ERROR_CATALOG[c];
          return `<section id="err-${esc(c)}"><h3><a href="#err-${esc(c)}">${esc(c)}</a></h3>
<p class="meta">HTTP ${statusForCode(c)} · type <code>${e.type}</code></p><p>${md(e.doc)}</p></section>`;
        })
        .join('\n');
      return `<h2 id="group-${esc(g)}">${esc(g)}</h2>\n${items}`;
    })
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Orquesta API errors</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1c1c1c}
section{border-top:1px solid #ddd;padding:.4rem 0}h3{margin:.4rem 0 0;font-family:ui-monospace,monospace;font-size:1rem}
.meta{color:#555;margin:0}code{background:#f3f3f3;padding:0 .2rem;border-radius:3px}:target{background:#fff8d6}</style></head>
<body><h1>Errors</h1>
<p>Every error answers <code>{"error": {"type", "code", "message", "doc_url", "request_id"}}</code>. Branch on <code>code</code>;
<code>message</code> is for people; <code>request_id</code> equals the <code>X-Request-Id</code> header. The HTTP status follows the code:
codes containing <code>not_found</code> give 404, <code>unauthorized</code> 403, <code>concurrent</code>, <code>conflict</code>,
<code>not_confirmable</code>, <code>not_refundable</code>, <code>blocked_by_risk</code> or <code>revoked</code> 409, others 400,
with the exceptions shown on each code below.</p>
${sections}
</body></html>`;
}
