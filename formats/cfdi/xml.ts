// A small element tree for CFDI documents: built by the builders in this folder, serialized here
// byte for byte as it is sealed, and read back from a PAC's answer with fast-xml-parser. The cadena
// original (cadena.ts) walks the same tree, so what is sealed is exactly what is written.
import { XMLParser } from 'fast-xml-parser';

export const NS = {
  cfdi: 'http://www.sat.gob.mx/cfd/4',
  pago20: 'http://www.sat.gob.mx/Pagos20',
  tfd: 'http://www.sat.gob.mx/TimbreFiscalDigital',
  xsi: 'http://www.w3.org/2001/XMLSchema-instance',
} as const;

export const SCHEMA_LOCATION = {
  cfdi: 'http://www.sat.gob.mx/cfd/4 http://www.sat.gob.mx/sitio_internet/cfd/4/cfdv40.xsd',
  pago20: 'http://www.sat.gob.mx/Pagos20 http://www.sat.gob.mx/sitio_internet/cfd/Pagos/Pagos20.xsd',
  tfd: 'http://www.sat.gob.mx/TimbreFiscalDigital http://www.sat.gob.mx/sitio_internet/cfd/TimbreFiscalDigital/TimbreFiscalDigitalv11.xsd',
} as const;

/** One element: qualified name as written (`cfdi:Concepto`), its namespace URI, attributes in document order. */
export interface XmlElement {
  name: string;
  ns: string;
  attrs: [string, string][];
  children: XmlElement[];
}

export const localName = (e: XmlElement) => e.name.slice(e.name.indexOf(':') + 1);

export function el(name: string, attrs: Record<string, string | undefined>, children: XmlElement[] = []): XmlElement {
  const prefix = name.includes(':') ? name.slice(0, name.indexOf(':')) : '';
  const ns = (NS as Record<string, string>)[prefix] ?? '';
  const list: [string, string][] = [];
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) list.push([k, v]);
  return { name, ns, attrs: list, children };
}

export const attr = (e: XmlElement, name: string): string | undefined => e.attrs.find(([k]) => k === name)?.[1];

export function setAttr(e: XmlElement, name: string, value: string): void {
  const i = e.attrs.findIndex(([k]) => k === name);
  if (i >= 0) e.attrs[i] = [name, value];
  else e.attrs.push([name, value]);
}

/** Children with this namespace and local name. */
export const kids = (e: XmlElement, ns: string, local: string) => e.children.filter((c) => c.ns === ns && localName(c) === local);
export const kid = (e: XmlElement, ns: string, local: string): XmlElement | undefined => kids(e, ns, local)[0];

// XML 1.0 Char production: anything else cannot be written at all, not even as a reference.
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** Attribute value escaping. Tab, LF and CR are written as references so a reader keeps them as written. */
export function escapeAttr(v: string): string {
  if (NOT_XML_CHAR.test(v)) throw new Error(`value contains a character XML cannot carry: ${JSON.stringify(v)}`);
  return v.replace(/[&<>"\t\n\r]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\t': '&#9;', '\n': '&#10;', '\r': '&#13;' })[c]!);
}

function write(e: XmlElement, out: string[]): void {
  out.push('<', e.name);
  for (const [k, v] of e.attrs) out.push(' ', k, '="', escapeAttr(v), '"');
  if (!e.children.length) {
    out.push('/>');
    return;
  }
  out.push('>');
  for (const c of e.children) write(c, out);
  out.push('</', e.name, '>');
}

/** The document as UTF-8 text with the XML declaration; no whitespace between elements. */
export function serialize(root: XmlElement): string {
  const out = ['<?xml version="1.0" encoding="UTF-8"?>\n'];
  write(root, out);
  return out.join('');
}

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseAttributeValue: false,
  parseTagValue: false,
  trimValues: true,
  processEntities: true,
  htmlEntities: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
});

type Ordered = Record<string, unknown> & { ':@'?: Record<string, string> };

/** XML attribute-value normalization (XML 1.0 §3.3.3) for a value read raw: literal whitespace becomes a space. */
const normalizeAttr = (v: string) => v.replace(/[\t\n\r]/g, ' ');

function convert(node: Ordered, scope: Record<string, string>): XmlElement | null {
  const name = Object.keys(node).find((k) => k !== ':@');
  if (!name || name.startsWith('#') || name.startsWith('?')) return null;
  const raw = node[':@'] ?? {};
  const attrs: [string, string][] = [];
  const here = { ...scope };
  for (const [k, v] of Object.entries(raw)) {
    if (k === 'xmlns') here[''] = v;
    else if (k.startsWith('xmlns:')) here[k.slice(6)] = v;
    attrs.push([k, normalizeAttr(String(v))]);
  }
  const prefix = name.includes(':') ? name.slice(0, name.indexOf(':')) : '';
  const ns = here[prefix];
  if (ns === undefined) throw new Error(`XML prefix "${prefix}" of <${name}> is not declared`);
  const children: XmlElement[] = [];
  for (const c of (node[name] as Ordered[]) ?? []) {
    const x = convert(c, here);
    if (x) children.push(x);
  }
  return { name, ns, attrs, children };
}

/** Parses an XML document into the element tree (namespaces resolved). Throws on malformed XML. */
export function parseXml(xml: string): XmlElement {
  let doc: Ordered[];
  try {
    doc = parser.parse(xml, true) as Ordered[];
  } catch (e) {
    throw new Error(`malformed XML: ${(e as Error).message}`);
  }
  for (const n of doc) {
    const root = convert(n, { '': '' });
    if (root) return root;
  }
  throw new Error('XML document has no root element');
}
