// Small pieces every screen uses: words in the member's language, money and dates as Mexicans read
// them, a table that becomes cards on a phone, forms, loading, empty states that teach, charts.
// Text is always rendered as text (Preact escapes it): nothing a merchant typed becomes markup.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/** A form's typed values, kept across renders (a plain `let` would be reset by any re-render before submit). */
export const useFields = <T extends object>(init: T): T => useRef(init).current;
import uPlot from 'uplot';
import { ApiFailure } from './api.js';
import { store, useStore } from './state.js';

/** The Spanish text, or the English one when the member chose English. */
export const L = (es: string, en: string): string => (store.getSnapshot().context.locale === 'en' ? en : es);

const TZ = 'America/Mexico_City';
export function money(minor: number | null | undefined, currency = 'MXN'): string {
  if (minor === null || minor === undefined) return '—';
  const n = new Intl.NumberFormat('es-MX', { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(minor / 100);
  return `${minor < 0 ? '-' : ''}$${n.replace('-', '')} ${currency}`;
}
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Intl.DateTimeFormat(L('es-MX', 'en-US'), { timeZone: TZ, dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso));
}
export function day(iso: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone: TZ, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(iso));
}
/** Pesos as typed ("1,850.50") to centavos. */
export function toMinor(s: string): number | undefined {
  const clean = s.replace(/[$,\s]|MXN/g, '');
  if (!/^\d+(\.\d{1,2})?$/.test(clean)) return undefined;
  const [i, f = ''] = clean.split('.');
  return Number(i) * 100 + Number((f + '00').slice(0, 2));
}

const STATUS_ES: Record<string, string> = {
  succeeded: 'Exitoso', requires_payment_method: 'Sin método', requires_confirmation: 'Por confirmar', requires_action: 'Requiere acción',
  processing: 'Procesando', requires_capture: 'Por capturar', canceled: 'Cancelado', failed: 'Fallido', pending: 'Pendiente', requested: 'Solicitado',
  approved: 'Aprobado', rejected: 'Rechazado', paid: 'Pagado', open: 'Abierto', active: 'Activo', disabled: 'Desactivado', delivered: 'Entregado',
  matched: 'Conciliado', unmatched: 'Sin conciliar', issued: 'Emitida', cancelled: 'Cancelada', draft: 'Borrador', expired: 'Vencido',
  stamped: 'Timbrada', cancel_pending: 'Cancelación pendiente', captured: 'Capturado', settled: 'Liquidado', refunded: 'Reembolsado', partially_refunded: 'Reembolso parcial', partial: 'Parcial', discarded: 'Descartado', processing_payout: 'Enviando',
  // receivables, disputes, payouts, sub-merchants and applications, saved methods, PAC errors
  overdue: 'Vencida', authorized: 'Autorizado', detached: 'Desvinculado', dispersing: 'Dispersando', error: 'Error', inactive: 'Inactivo',
  lost: 'Perdida', won: 'Ganada', needs_info: 'Falta información', needs_response: 'Requiere respuesta', under_review: 'En revisión',
  registered: 'Registrado', returned: 'Devuelto', suspended: 'Suspendido', none: 'Ninguno',
};
/** A status in the member's language (the API's word in English). */
export const statusLabel = (v: string) => L(STATUS_ES[v] ?? v, v.replace(/_/g, ' '));
export function Status({ s }: { s: string | null | undefined }) {
  const v = s ?? '—';
  const tone = /succeeded|paid|approved|^active|delivered|^matched|issued|stamped|captured|settled|won|^ok/.test(v) ? 'ok' : /fail|cancel|reject|disabled|inactive|expired|error|overdue|lost|returned|suspended/.test(v) ? 'bad' : 'wait';
  return <span class={`badge ${tone}`}>{statusLabel(v)}</span>;
}

export interface Col<T> { label: string; get: (r: T) => ComponentChildren; cls?: string }
/** A table on a desktop; under 600 px each row is a card with its labels (CSS only: one markup). */
export function Table<T>({ rows, cols, onRow, testid, caption }: { rows: T[]; cols: Col<T>[]; onRow?: (r: T) => void; testid?: string; caption?: string }) {
  return (
    <table class="tbl" data-testid={testid}>
      {caption ? <caption class="sr-only">{caption}</caption> : null}
      <thead>
        <tr>{cols.map((c) => <th scope="col" class={c.cls}>{c.label}</th>)}</tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          // The whole row opens for a pointer; its first cell's button is the keyboard's way (a click on it bubbles here).
          <tr class={onRow ? 'clickable' : undefined} onClick={onRow ? () => onRow(r) : undefined}>
            {cols.map((c, i) => (
              <td data-label={c.label} class={c.cls}>
                {i === 0 && onRow ? <button type="button" class="linkish">{c.get(r)}</button> : c.get(r)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const version = useStore((c) => `${c.version}:${c.mode}`);
  const [state, set] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [n, bump] = useState(0);
  useEffect(() => {
    let live = true;
    set((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && set({ data, loading: false }),
      (e) => live && set({ error: (e as Error).message, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, version, n]);
  return { ...state, reload: () => bump((x) => x + 1) };
}

export function Loading({ state }: { state: { loading: boolean; error?: string } }) {
  if (state.error) return <p class="error" role="alert">{state.error}</p>;
  return state.loading ? <p class="muted" aria-live="polite">{L('Cargando…', 'Loading…')}</p> : null;
}

/** An empty list says what would fill it: the call, with the member's test key placeholder. */
export function Empty({ what, curl }: { what: string; curl?: string }) {
  return (
    <div class="empty" data-testid="empty">
      <p>{what}</p>
      {curl ? (
        <>
          <p class="muted">{L('Con tu llave de prueba (Desarrolladores → Llaves API):', 'With your test key (Developers → API keys):')}</p>
          <pre class="code">{curl}</pre>
        </>
      ) : null}
    </div>
  );
}

export function Field(p: { label: string; name: string; type?: string; value?: string; required?: boolean; placeholder?: string; autocomplete?: string; inputmode?: string; hint?: string; onInput?: (v: string) => void; options?: Array<[string, string]>; testid?: string; min?: string; max?: string }) {
  const id = `f-${p.name}`;
  return (
    <div class="field">
      <label for={id}>{p.label}</label>
      {p.options ? (
        <select id={id} name={p.name} value={p.value} data-testid={p.testid} onChange={(e) => p.onInput?.((e.target as HTMLSelectElement).value)}>
          {p.options.map(([v, l]) => <option value={v}>{l}</option>)}
        </select>
      ) : (
        <input
          id={id}
          name={p.name}
          type={p.type ?? 'text'}
          value={p.value}
          required={p.required}
          placeholder={p.placeholder}
          autoComplete={p.autocomplete}
          inputMode={p.inputmode as never}
          data-testid={p.testid}
          min={p.min}
          max={p.max}
          aria-describedby={p.hint ? `${id}-hint` : undefined}
          onInput={(e) => p.onInput?.((e.target as HTMLInputElement).value)}
        />
      )}
      {p.hint ? <small id={`${id}-hint`} class="muted">{p.hint}</small> : null}
    </div>
  );
}

/** A form whose submit runs an action; the answer's error is shown by the form, a success by a notice. */
export function Form({ onSubmit, children, submit, testid, danger }: { onSubmit: () => Promise<string | void>; children: ComponentChildren; submit: string; testid?: string; danger?: boolean }) {
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState('');
  return (
    <form
      class="form"
      data-testid={testid}
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setErr('');
        try {
          const msg = await onSubmit();
          if (msg) store.trigger.notify({ kind: 'ok', text: msg });
        } catch (x) {
          setErr(x instanceof ApiFailure ? `${x.message} (${x.code})` : (x as Error).message);
        } finally {
          setBusy(false);
        }
      }}
    >
      {children}
      {err ? <p class="error" role="alert" data-testid="form-error">{err}</p> : null}
      <button type="submit" class={danger ? 'btn danger' : 'btn primary'} disabled={busy}>{submit}</button>
    </form>
  );
}

export function Card({ title, children, actions }: { title?: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card">
      {title || actions ? (
        <div class="card-head">
          {title ? <h2>{title}</h2> : <span />}
          {actions}
        </div>
      ) : null}
      {children}
    </section>
  );
}

export function Json({ value }: { value: unknown }) {
  return (
    <details class="raw">
      <summary>JSON</summary>
      <pre class="code">{JSON.stringify(value, null, 2)}</pre>
    </details>
  );
}

export function Dl({ items }: { items: Array<[string, ComponentChildren]> }) {
  return (
    <dl class="dl">
      {items.map(([k, v]) => (
        <div>
          <dt>{k}</dt>
          <dd>{v ?? '—'}</dd>
        </div>
      ))}
    </dl>
  );
}

/** A bar chart (uPlot) of labelled values; the numbers are also in a table for screen readers. */
export function Bars({ labels, series, title }: { labels: string[]; series: Array<{ name: string; values: number[]; color: string }>; title: string }) {
  const el = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!el.current || !labels.length) return;
    const width = Math.min(el.current.clientWidth || 320, 900);
    const xs = labels.map((_, i) => i);
    const bars = uPlot.paths.bars!({ size: [0.6, 60] });
    const u = new uPlot(
      {
        width,
        height: 220,
        title,
        scales: { x: { time: false, range: [-0.5, labels.length - 0.5] } },
        // One tick per bar (no fractional positions), pesos on the y axis; the legend is off: the
        // figures are in the table below (for screen readers), and uPlot's legend would say "Value".
        axes: [
          { splits: () => xs, values: (_u, v) => v.map((i) => labels[i] ?? '') },
          { size: 80, values: (_u, v) => v.map((x) => `$${(x / 100).toLocaleString('es-MX', { maximumFractionDigits: Math.max(...v.map(Math.abs)) < 1000 ? 2 : 0 })}`) },
        ],
        series: [{}, ...series.map((s) => ({ label: s.name, stroke: s.color, fill: s.color, paths: bars, points: { show: false } }))],
        legend: { show: false },
      },
      [xs, ...series.map((s) => s.values)] as uPlot.AlignedData,
      el.current,
    );
    return () => u.destroy();
  }, [JSON.stringify(labels), JSON.stringify(series)]);
  return (
    <figure class="chart">
      <div ref={el} aria-hidden="true" />
      <table class="sr-only">
        <caption>{title}</caption>
        <tbody>
          {labels.map((l, i) => (
            <tr>
              <th scope="row">{l}</th>
              {series.map((s) => <td>{money(s.values[i])}</td>)}
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
