// npm run bench:<name> [-- options]: install, build, check services, then run dist/bench/<name>.js.
//
// The regression guard: `npm run bench:<name> -- --baseline <commit> [--rounds N] [bench options]`
// builds <commit> in a worktree under /tmp (git worktree add --detach, node_modules shared when the
// lock file and patches/ are the same, else npm ci --prefer-offline; then its own build), and runs THIS tree's
// bench against both builds in one invocation, alternating (base, head, then head, base, …), each
// run with BENCH_APP_ROOT pointing at the build under test (the bench starts that build's app; the
// load generator and its measurements are the same code; so is a "(control)" headline figure, the
// bare stack of bench/confirm and bench/payouts, whose ratio is printed as the invocation's own bias).
// Each bench's --json carries `headline`: { metric: { value, better: 'higher' | 'lower', unit } };
// the ratio head/base of each metric (mean over rounds) is printed with the load average before every
// run. --guard-json <file> keeps them.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, checkNode, ensureInstalled, installKey, preflight, root } from './launcher.mjs';

checkNode();
ensureInstalled();
build();
preflight(process.env);
const name = process.argv[2];
if (!name || !existsSync(join(root, 'dist', 'bench', `${name}.js`))) {
  console.error(`usage: node ops/bench.mjs <name> [--baseline <commit> [--rounds N] [--guard-json file]] [bench options]; no dist/bench/${name}.js`);
  process.exit(2);
}

// Our own options; the rest goes to the bench.
let baseline;
let rounds = 1;
let guardJson;
const rest = [];
const argv = process.argv.slice(3);
for (let i = 0; i < argv.length; i++) {
  const [flag, inline] = argv[i].split('=', 2);
  const value = () => inline ?? argv[++i];
  if (flag === '--baseline') baseline = value();
  else if (flag === '--rounds') rounds = Math.max(1, Math.min(5, Number(value()) || 1));
  else if (flag === '--guard-json') guardJson = value();
  else rest.push(argv[i]);
}

let stopping = false;
function runBench(args, env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'dist', 'bench', `${name}.js`), ...args], { cwd: root, stdio: 'inherit', env });
    // A signal stops the bench in progress (it cleans up) and the guard's remaining runs.
    const fwd = (sig) => {
      stopping = true;
      child.kill(sig);
    };
    process.on('SIGINT', fwd);
    process.on('SIGTERM', fwd);
    child.on('exit', (code) => {
      process.off('SIGINT', fwd);
      process.off('SIGTERM', fwd);
      resolve(code ?? 1);
    });
  });
}

if (!baseline) process.exit(await runBench(rest, process.env));

// --- the baseline's build -------------------------------------------------------------------
const git = (...a) => execFileSync('git', a, { cwd: root, encoding: 'utf8' }).trim();
const sha = git('rev-parse', '--verify', `${baseline}^{commit}`);
const head = git('rev-parse', '--short', 'HEAD') + (git('status', '--porcelain', '--untracked-files=no') ? '+changes' : '');
const dir = join(tmpdir(), `orq-bench-base-${sha.slice(0, 12)}`);
const stamp = join(dir, '.bench-built');
if (!existsSync(stamp) || readFileSync(stamp, 'utf8').trim() !== sha) {
  console.log(`bench guard: building ${sha.slice(0, 12)} in ${dir}`);
  if (existsSync(dir)) {
    spawnSync('git', ['worktree', 'remove', '--force', dir], { cwd: root, stdio: 'inherit' });
    rmSync(dir, { recursive: true, force: true });
  }
  git('worktree', 'add', '--detach', dir, sha);
  // The same lock file and the same patches/: the installs would be the same.
  const sameLock = installKey(dir).key === installKey(root).key;
  if (sameLock) symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  else {
    const r = spawnSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: 'inherit' });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
  // The baseline's own build script (its package.json): commits before ops/build.mjs built with tsc alone.
  const b = spawnSync('npm', ['run', '--silent', 'build'], { cwd: dir, stdio: 'inherit' });
  if (b.status !== 0) process.exit(b.status ?? 1);
  writeFileSync(stamp, sha + '\n');
}

// --- alternating runs -----------------------------------------------------------------------
const tmp = mkdtempSync(join(tmpdir(), 'orq-bench-guard-'));
const runs = [];
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? ['base', 'head'] : ['head', 'base'];
  for (const which of order) {
    const file = join(tmp, `${which}-${r}.json`);
    const load = loadavg().map((x) => x.toFixed(2)).join(' ');
    console.log(`\n=== bench guard: ${name} on ${which === 'base' ? `baseline ${sha.slice(0, 12)}` : `head ${head}`} (round ${r + 1}/${rounds}, load average ${load}) ===`);
    const env = { ...process.env };
    if (which === 'base') env.BENCH_APP_ROOT = dir;
    else delete env.BENCH_APP_ROOT;
    const code = await runBench([...rest, '--json', file], env);
    let headline = {};
    try {
      headline = JSON.parse(readFileSync(file, 'utf8')).headline ?? {};
    } catch {
      /* no JSON: the run failed */
    }
    runs.push({ which, round: r + 1, code, load, headline });
    if (stopping) process.exit(130);
    // A bench that writes no headline (no --json, or none in it) has nothing to compare: say so
    // instead of printing an empty table and exiting 0 as if nothing had regressed.
    if (code === 0 && !Object.keys(headline).length) {
      console.error(`bench guard: ${name} wrote no headline figures to --json, so the guard cannot compare it (benches with a headline: confirm, cost, openloop, invoices, payouts, reconciliation, younggen)`);
      process.exit(2);
    }
  }
}
rmSync(tmp, { recursive: true, force: true });

const metrics = [...new Set(runs.flatMap((x) => Object.keys(x.headline)))];
const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
const fmt = (v) => (Number.isFinite(v) ? (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2)) : 'n/a');
const rows = metrics.map((m) => {
  // A figure a run could not measure (NaN, written as null) is left out, not averaged as 0.
  const vals = (w) => runs.filter((x) => x.which === w && Number.isFinite(x.headline[m]?.value)).map((x) => x.headline[m].value);
  const any = runs.find((x) => x.headline[m])?.headline[m];
  const b = mean(vals('base'));
  const h = mean(vals('head'));
  return { metric: m, unit: any?.unit ?? '', better: any?.better ?? 'higher', base: vals('base'), head: vals('head'), ratio: h / b };
});
console.log(`\n=== bench guard: ${name}, head ${head} vs baseline ${sha.slice(0, 12)}, ${rounds} round(s), ${new Date().toISOString()} ===`);
console.log(`runs: ${runs.map((x) => `${x.which}#${x.round} exit ${x.code} (load ${x.load})`).join('; ')}`);
console.log('| metric | baseline | head | head / baseline | better |');
console.log('| --- | ---: | ---: | ---: | --- |');
for (const r of rows) console.log(`| ${r.metric}${r.unit ? ` (${r.unit})` : ''} | ${r.base.map(fmt).join(', ')} | ${r.head.map(fmt).join(', ')} | **${fmt(r.ratio)}x** | ${r.better} |`);
// A control (bench/confirm's and bench/payouts' bare stack) runs this tree's code in both builds'
// runs: its head / baseline is the invocation's own bias (the order, the machine's drift).
for (const c of rows.filter((r) => /\(control\)/.test(r.metric))) {
  console.log(`control: "${c.metric}" runs the same code in both builds' runs, so its head / baseline of ${fmt(c.ratio)}x is this invocation's own bias (the order base, head, head, base; the machine's drift): read the other ratios against it (a throughput at ${fmt(c.ratio)}x is no change).`);
}
if (guardJson) writeFileSync(guardJson, JSON.stringify({ bench: name, baseline: sha, head, rounds, args: rest, date: new Date().toISOString(), runs, rows }, null, 2) + '\n');
process.exit(runs.some((x) => x.code !== 0) ? 1 : 0);
