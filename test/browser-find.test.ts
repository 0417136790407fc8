// npm test uses the Chromium that is there (issue: tests use what is there): the headless shell
// first, then the full browser; CHROMIUM_PATH wins; an install happens only when none exists.
import t from 'tap';
import { CANDIDATES, findChromium } from './helpers/browser.js';

t.test('the installed Chromium is preferred in order; none found means an install', async (t) => {
  const only = (...paths: string[]) => (p: string) => paths.includes(p);
  t.equal(findChromium({}, only('/usr/bin/chromium', '/usr/bin/chromium-headless-shell')), '/usr/bin/chromium-headless-shell', 'the headless shell first');
  t.equal(findChromium({}, only('/usr/bin/chromium')), '/usr/bin/chromium', 'the full browser when it is the one installed');
  t.equal(findChromium({ CHROMIUM_PATH: '/opt/c/chrome' }, only('/opt/c/chrome', '/usr/bin/chromium')), '/opt/c/chrome', 'CHROMIUM_PATH wins');
  t.equal(findChromium({ CHROMIUM_PATH: '/nope' }, only('/usr/bin/chromium')), '/usr/bin/chromium', 'a CHROMIUM_PATH that does not exist is ignored');
  t.equal(findChromium({}, only()), undefined, 'nothing installed: ensureChromium installs chromium-headless-shell');
  t.equal(CANDIDATES[0], '/usr/bin/chromium-headless-shell');
});
