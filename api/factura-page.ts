// The self-invoice page (/factura/{slug}): a real HTML form in Spanish that a shopper holding a
// receipt fills in on a phone. The script (/js/factura.js) posts it to /public/factura/{slug}; no
// inline script, so the same strict CSP as the checkout pages applies.
import { REGIMENES, USOS } from '../formats/cfdi/catalogs.js';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

function layout(title: string, body: string, scripts: string[] = []): string {
  return `<!doctype html>
<html lang="es"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/js/checkout.css"><link rel="stylesheet" href="/js/factura.css"></head>
<body class="orq-page orq-factura"><main>${body}</main>${scripts.map((s) => `<script src="${esc(s)}"></script>`).join('')}</body></html>`;
}

const USOS_PAGINA = ['G01', 'G02', 'G03', 'I01', 'I02', 'I03', 'I04', 'I05', 'I06', 'I07', 'I08', 'D01', 'D02', 'D03', 'D04', 'D05', 'D06', 'D07', 'D08', 'D09', 'D10', 'S01', 'CP01'];

/** `receiptCode`: filled in when the checkout's "¿Necesitas factura?" link brought the shopper here. */
export function facturaPage(o: { slug: string; comercio: string; testMode: boolean; receiptCode?: string }): string {
  const receipt = o.receiptCode && /^W-[0-9A-Z]{5}$/i.test(o.receiptCode) ? ` value="${esc(o.receiptCode.toUpperCase())}"` : '';
  const regimenes = Object.entries(REGIMENES)
    .map(([k, v]) => `<option value="${k}">${k} · ${esc(v.descripcion)}</option>`)
    .join('');
  const usos = USOS_PAGINA.map((k) => `<option value="${k}"${k === 'G03' ? ' selected' : ''}>${k} · ${esc(USOS[k]!.descripcion)}</option>`).join('');
  return layout(
    `Factura tu compra · ${o.comercio}`,
    `<div class="orq-card">
<div class="orq-head"><div class="orq-merchant" data-testid="comercio">${esc(o.comercio)}</div><h1>Factura tu compra</h1>
<div class="orq-concept">Escribe el código de tu ticket y tus datos fiscales tal como aparecen en tu Constancia de Situación Fiscal.</div></div>
${o.testMode ? '<div class="orq-test" data-testid="modo-prueba">Modo de prueba: la factura no tiene validez fiscal.</div>' : ''}
<form class="orq-fields" data-orquesta-factura data-slug="${esc(o.slug)}" novalidate>
<label for="f-receipt">Código del ticket<small>Viene impreso en tu ticket, por ejemplo W-7K2QD</small></label>
<input id="f-receipt" name="receipt_code" autocomplete="off" autocapitalize="characters" spellcheck="false" placeholder="W-XXXXX" maxlength="7"${receipt} required>
<label for="f-rfc">RFC<small>12 caracteres (empresa) o 13 (persona física)</small></label>
<input id="f-rfc" name="rfc" autocomplete="off" autocapitalize="characters" spellcheck="false" placeholder="XAXX010101000" maxlength="13" required>
<label for="f-nombre">Nombre o razón social<small>Sin el régimen societario (sin «S.A. de C.V.»)</small></label>
<input id="f-nombre" name="nombre" autocomplete="name" autocapitalize="characters" maxlength="254" required>
<label for="f-cp">Código postal de tu domicilio fiscal</label>
<input id="f-cp" name="cp" inputmode="numeric" pattern="[0-9]{5}" maxlength="5" autocomplete="postal-code" required>
<label for="f-regimen">Régimen fiscal</label>
<select id="f-regimen" name="regimen_fiscal" required><option value="">Elige tu régimen</option>${regimenes}</select>
<label for="f-uso">Uso del CFDI</label>
<select id="f-uso" name="uso_cfdi" required>${usos}</select>
<label for="f-email">Correo electrónico (opcional)</label>
<input id="f-email" name="email" type="email" inputmode="email" autocomplete="email" maxlength="320">
<div class="orq-error" role="alert" aria-live="polite" data-testid="error"></div>
<button type="submit" class="orq-pay" data-testid="factura-submit">Generar factura</button>
</form>
<div class="orq-ok" data-testid="factura-ok" hidden>
<div class="orq-result orq-succeeded">¡Tu factura está lista!</div>
<dl><dt>Folio fiscal (UUID)</dt><dd data-field="uuid" data-testid="uuid"></dd><dt>Serie y folio</dt><dd data-field="folio"></dd><dt>Total</dt><dd data-field="total"></dd></dl>
<div class="orq-downloads"><a class="orq-pay" data-testid="download-pdf" href="#">Descargar PDF</a><a class="orq-pay" data-testid="download-xml" href="#">Descargar XML</a></div>
</div></div>`,
    ['/js/factura.js'],
  );
}

export function facturaNoDisponible(): string {
  return layout('Facturación no disponible', `<div class="orq-card"><div class="orq-result" data-testid="factura-no-disponible">La facturación en línea no está disponible en esta dirección.</div></div>`);
}
