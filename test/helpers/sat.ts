// The SAT oracle for tests: xmllint (libxml2-utils) validates against SAT's XSDs, xsltproc runs
// SAT's cadena original stylesheets (test/sat/, includes rewritten to local files). Both Debian
// tools are installed by ops/preflight.ts when absent.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../ops/paths.js';

export const SAT_DIR = join(projectRoot, 'test', 'sat');

function withFile<T>(xml: string, fn: (path: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'orq-cfdi-'));
  const f = join(dir, 'doc.xml');
  writeFileSync(f, xml);
  try {
    return fn(f);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** xmllint --schema all.xsd: { ok, output } (output carries the validation errors). */
export function xsdValidate(xml: string): { ok: boolean; output: string } {
  return withFile(xml, (f) => {
    const r = spawnSync('xmllint', ['--noout', '--nonet', '--schema', join(SAT_DIR, 'all.xsd'), f], { encoding: 'utf8' });
    if (r.error) throw r.error;
    return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
  });
}

// xsltproc warns on stderr that SAT's stylesheets say version="2.0" and runs them in forward-compatible
// mode (they use only XSLT 1.0); the warning is dropped, a failure (non-zero exit) throws.
function xslt(stylesheet: string, xml: string): string {
  return withFile(xml, (f) => execFileSync('xsltproc', ['--nonet', join(SAT_DIR, stylesheet), f], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
}

/** Cadena original by SAT's cadenaoriginal_4_0.xslt (xsltproc). */
export const xsltCadena = (xml: string) => xslt('cadenaoriginal_4_0.xslt', xml);

/** Cadena of a standalone tfd:TimbreFiscalDigital by SAT's cadenaoriginal_TFD_1_1.xslt. */
export const xsltCadenaTfd = (tfdXml: string) => xslt('cadenaoriginal_TFD_1_1.xslt', tfdXml);
