// Server-rendered pages of the browser flow: /pay/{slug}, /demo, the sim's 3-D Secure step.
// Each page loads the kit (/js/checkout.js); no inline script, so a strict CSP applies.
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

// The card connectors' browser tokenizers (web/tokenize.js: Conekta.js, Openpay.js) load from and talk to their own origins.
export const PAGE_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self' https://cdn.conekta.io https://js.openpay.mx; connect-src 'self' https://api.conekta.io https://api.openpay.mx https://sandbox-api.openpay.mx; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/** The page CSP, letting images load from the origin of the merchant's https logo too (when it has one). */
export function pageCsp(logoUrl?: string | null): string {
  let origin: string | undefined;
  try {
    const u = new URL(logoUrl ?? '');
    if (u.protocol === 'https:') origin = u.origin;
  } catch {
    origin = undefined;
  }
  return origin ? PAGE_CSP.replace("img-src 'self' data:", `img-src 'self' data: ${origin}`) : PAGE_CSP;
}

function layout(title: string, body: string, scripts: string[] = []): string {
  return `<!doctype html>
<html lang="es"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/js/checkout.css"></head>
<body class="orq-page"><main>${body}</main>${scripts.map((s) => `<script src="${esc(s)}"></script>`).join('')}</body></html>`;
}

/**
 * `replaced`: the link's previous intent when this visit made a new one (the kit says so, with the
 * decline's reason); `slug`: lets the kit notice a reload of a reusable link that made a new intent.
 */
export function payPage(o: { intentId: string; clientSecret: string; title: string; slug: string; replaced?: { status: string; declineCode?: string } }): string {
  const r = o.replaced;
  const replaced = r ? ` data-replaced="${esc(r.status)}"${r.declineCode ? ` data-replaced-reason="${esc(r.declineCode)}"` : ''}` : '';
  return layout(
    o.title,
    `<div class="orq-card-host" data-orquesta-checkout data-payment-intent="${esc(o.intentId)}" data-client-secret="${esc(o.clientSecret)}" data-link="${esc(o.slug)}"${replaced}></div>`,
    ['/js/tokenize.js', '/js/checkout.js'],
  );
}

export function messagePage(title: string, message: string, testId: string): string {
  return layout(title, `<div class="orq-card"><div class="orq-result" data-testid="${esc(testId)}">${esc(message)}</div></div>`);
}

export function demoPage(available: boolean): string {
  if (!available) return messagePage('Orquesta demo', 'La demo necesita el tenant de demostración que crea `npm start` (SEED_DEMO_TENANT).', 'demo-unavailable');
  return layout(
    'Orquesta demo',
    `<div class="orq-card"><div class="orq-head"><div class="orq-merchant">Orquesta · demo en modo de prueba</div>
<div class="orq-concept">Crea un enlace de pago de prueba y págalo con las tarjetas simuladas, SPEI, CoDi u OXXO.</div></div>
<form class="orq-fields" data-orquesta-demo>
<label for="demo-amount">Monto (MXN)</label><input id="demo-amount" name="amount" value="150.00" inputmode="decimal" autocomplete="off" aria-describedby="demo-amount-hint">
<p class="orq-hint" id="demo-amount-hint">En pesos, como se escribe en México: 1,500.00</p>
<label for="demo-concept">Concepto</label><input id="demo-concept" name="concepto" value="Tacos al pastor (demo)">
<button type="submit" class="orq-pay" data-testid="demo-create">Crear enlace y pagar</button></form>
<div class="orq-error" role="alert" data-testid="error"></div></div>`,
    ['/js/demo.js'],
  );
}

export function threeDsPage(ref: string, returnTo: string | undefined): string {
  return layout(
    '3-D Secure (simulado)',
    `<div class="orq-card" data-orquesta-3ds data-ref="${esc(ref)}" data-return-to="${esc(returnTo ?? '')}">
<div class="orq-head"><div class="orq-merchant">Banco emisor (simulado)</div><div class="orq-concept">Confirma esta compra con 3-D Secure.</div></div>
<button type="button" class="orq-pay" data-decision="approve" data-testid="3ds-approve">Aprobar</button>
<button type="button" class="orq-pay orq-danger" data-decision="decline" data-testid="3ds-decline">Rechazar</button>
<div class="orq-error" role="alert" data-testid="error"></div></div>`,
    ['/js/sim-3ds.js'],
  );
}
