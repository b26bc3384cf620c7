#!/usr/bin/env node
import { spawnSync } from 'node:child_process';
/**
 * `npm run build`: compiles LetKite to JavaScript that plain Node runs (no tsx at run time).
 *
 *   dist/cli/main.mjs        the `letkite` command (gateway, agent, admin) with the workspace packages bundled in;
 *                            third-party packages stay in node_modules (native parts, pino's workers, drizzle)
 *   dist/cli/…               the run-time files it reads, next to it: migrations, the web app, the sandbox helper,
 *                            the exec launcher, the file worker, the bash grammar
 *   dist/agent/              the agent alone, for machines with only Node: one bundle (every dependency inside),
 *                            its native parts and manifest.json (SHA-256 of each file)
 *   dist/letkite-agent-<os>-<arch>.tar.gz   dist/agent packed, what the gateway serves at /agent/download
 *
 * A bundled module finds its files through `import.meta.letkiteBundle` (set here by `define`): when it is set, they
 * sit next to the bundle; in the source tree they are where they always were. See tools/build/README.md.
 *
 * Usage: node tools/build/build.mjs [cli] [agent]   (both by default)
 *        node tools/build/build.mjs --if-stale      (what `npm start` runs: rebuild only when a source is newer)
 *        node tools/build/build.mjs --keep-webapp   (use apps/webapp/dist as it is, unless it is missing)
 */
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { protocolCoreForAgent, protocolWithoutSideEffects, zodEnglishOnly } from './esbuild-plugins.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const dist = join(root, 'dist');
const require = createRequire(join(root, 'package.json'));
const platform = `${process.platform}-${process.arch}`;

/** The packed agent's file name for this OS and CPU (what `GET /agent/download/<os>-<arch>` serves). */
const agentTarball = `letkite-agent-${platform}.tar.gz`;

// CommonJS dependencies inside an ES module bundle still call require() and read __dirname (node-pty, ws).
const banner = {
  js: "import { createRequire as __letkiteCreateRequire } from 'node:module';\nconst require = __letkiteCreateRequire(import.meta.url);",
};
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  banner,
  define: { __dirname: 'import.meta.dirname', __filename: 'import.meta.filename' },
  // Folds `import.meta.letkiteBundle ? built : source` to the built branch; names and lines stay readable.
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
  sourcemap: false,
};

/** Keeps every third-party import external (resolved from node_modules at run time); bundles @letkite/*. */
const thirdPartyExternal = {
  name: 'third-party-external',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('@letkite/') || args.path.startsWith('node:')
        ? undefined
        : { path: args.path, external: true },
    );
  },
};

function copy(from, to) {
  mkdirSync(dirname(to), { recursive: true });
  cpSync(from, to, { recursive: true });
}

/** What a comment's non-ASCII characters become (anything else: `?`). */
const ASCII_FOR = {
  '\u2014': '--',
  '\u2013': '-',
  '\u2026': '...',
  '\u00a7': 'S',
  '\u2192': '->',
  '\u2190': '<-',
  '\u00d7': 'x',
  '\u2265': '>=',
  '\u2264': '<=',
  '\u2019': "'",
  '\u201c': '"',
  '\u201d': '"',
};

/**
 * Makes a bundle ASCII-only. V8 keeps every script's source in memory, as one byte a character when it is all
 * Latin-1 and two otherwise: one `—` in a comment doubles the 2 MB agent bundle's resident source (issue #13,
 * measured with bench/memory/attribute.ts). esbuild already escapes non-ASCII in code, strings and regular
 * expressions (its default `charset: 'ascii'`), so what is left is in comments; a non-ASCII character on a line that
 * is not in a comment (no `//`, `/*` or leading `*` before it) fails the build instead of being rewritten.
 */
function asciiOnly(file) {
  const text = readFileSync(file, 'utf8');
  if (!/[^\x00-\x7f]/.test(text)) return;
  const lines = text.split('\n').map((line, i) => {
    if (!/[^\x00-\x7f]/.test(line)) return line;
    const before = line.slice(0, line.search(/[^\x00-\x7f]/));
    if (!/^\s*\*|\/\/|\/\*/.test(before)) throw new Error(`${file}:${i + 1}: non-ASCII outside a comment`);
    return line.replace(/[^\x00-\x7f]/gu, (c) => ASCII_FOR[c] ?? '?');
  });
  writeFileSync(file, lines.join('\n'));
}

/**
 * web-tree-sitter's CommonJS build and its wasm, beside the bundle: the command rules evaluate a fresh copy of it
 * for each parser so that an idle agent can let the grammar go (packages/command-rules/src/grammar-loader.ts).
 */
function copyWebTreeSitterRuntime(out) {
  const dir = dirname(require.resolve('web-tree-sitter'));
  copy(join(dir, 'web-tree-sitter.cjs'), join(out, 'web-tree-sitter.cjs'));
  copy(join(dir, 'web-tree-sitter.wasm'), join(out, 'web-tree-sitter.wasm'));
}

let nativeBuilt = false;
/**
 * A native helper (apps/agent/native: the sandbox helper, the exec launcher), (re)built first when missing or
 * older than its source: the build script skips what is up to date.
 */
function nativeHelper(name) {
  const helper = join(root, 'apps/agent/native/build', name);
  if (process.platform === 'linux' && !nativeBuilt) {
    const r = spawnSync(process.execPath, [join(root, 'apps/agent/scripts/build-sandbox.mjs')], { stdio: 'inherit' });
    if (r.status !== 0) throw new Error('the native helpers did not build (see above)');
    nativeBuilt = true;
  }
  return existsSync(helper) ? helper : undefined;
}

/** Builds into a fresh `<dir>.partial` and renames it over `<dir>`, so a failed build never leaves half a layout. */
async function intoFresh(dir, fill) {
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  try {
    await fill(partial);
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    throw err;
  }
  rmSync(dir, { recursive: true, force: true });
  renameSync(partial, dir);
}

async function buildCli() {
  const webapp = join(root, 'apps/webapp/dist');
  // The web app's own build (tsc + vite) is the slow part: run it only when its output is missing or older.
  const webappInputs = [
    'apps/webapp/src',
    'apps/webapp/public',
    'apps/webapp/index.html',
    'apps/webapp/vite.config.ts',
  ];
  const builtWebapp = builtAt(join(webapp, 'index.html'));
  if (builtWebapp === 0 || (!keepWebapp && builtWebapp < newestUnder(webappInputs))) {
    const r = spawnSync('npm', ['run', 'build', '-w', '@letkite/webapp'], { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) {
      // `npm start` with a web app half-edited: serve the last good build rather than not start (and say so).
      if (!ifStale || builtWebapp === 0) throw new Error('the web app did not build (see above)');
      console.error('build: the web app did not build (see above); dist/cli keeps the previous web app build');
    }
  }
  await intoFresh(join(dist, 'cli'), async (out) => {
    const shared = {
      ...common,
      plugins: [thirdPartyExternal, protocolWithoutSideEffects],
      define: { ...common.define, 'import.meta.letkiteBundle': '"cli"' },
    };
    // Split: each command is a chunk loaded when it runs (apps/cli/src/main.ts), with the third-party packages it
    // imports, so `letkite agent run` loads no gateway. Chunks sit beside main.mjs: their run-time files are too.
    await esbuild.build({
      ...shared,
      entryPoints: { main: join(root, 'apps/cli/src/main.ts') },
      outdir: out,
      splitting: true,
      chunkNames: 'chunk-[hash]',
      outExtension: { '.js': '.mjs' },
    });
    await esbuild.build({
      ...shared,
      entryPoints: [join(root, 'apps/agent/src/files/worker-main.ts')],
      outfile: join(out, 'file-worker.mjs'),
    });
    copy(join(root, 'apps/gateway/drizzle'), join(out, 'drizzle'));
    copy(webapp, join(out, 'webapp'));
    copy(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'), join(out, 'tree-sitter-bash.wasm'));
    copyWebTreeSitterRuntime(out);
    const helper = nativeHelper('letkite-sandbox');
    if (helper) copy(helper, join(out, 'letkite-sandbox'));
    const launcher = nativeHelper('letkite-launch');
    if (launcher) copy(launcher, join(out, 'letkite-launch'));
    for (const f of readdirSync(out)) if (f.endsWith('.mjs')) asciiOnly(join(out, f));
    chmodSync(join(out, 'main.mjs'), 0o755);
  });
}

function sha256(path) {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

function filesUnder(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? filesUnder(p, base) : [relative(base, p)];
  });
}

async function buildAgent() {
  const agentDir = join(dist, 'agent');
  await intoFresh(agentDir, async (out) => {
    const shared = { ...common, define: { ...common.define, 'import.meta.letkiteBundle': '"agent"' } };
    // bufferutil and utf-8-validate are ws's optional speed-ups (native, absent here): ws falls back without them.
    const external = ['bufferutil', 'utf-8-validate'];
    // zod is bundled here (not in dist/cli): only its English messages, and only the protocol modules used.
    const plugins = [protocolWithoutSideEffects, zodEnglishOnly];
    // Split: the ops other than exec (files, jobs, terminals, screen, transfers, tunnels, wake) are chunks the
    // agent imports on their first request (apps/agent/src/ops/features.ts), so an idle agent neither parses nor
    // evaluates them: V8 keeps every loaded script's source, and parsing one leaves malloc memory behind (issue #13,
    // bench/memory/attribute.ts). Chunks sit beside the entry: their run-time files are found next to them.
    await esbuild.build({
      ...shared,
      external,
      plugins: [protocolCoreForAgent, ...plugins],
      entryPoints: { 'letkite-agent': join(root, 'tools/build/agent-main.ts') },
      outdir: out,
      splitting: true,
      chunkNames: 'chunk-[hash]',
      outExtension: { '.js': '.mjs' },
    });
    await esbuild.build({
      ...shared,
      external,
      plugins,
      entryPoints: [join(root, 'apps/agent/src/files/worker-main.ts')],
      outfile: join(out, 'file-worker.mjs'),
    });
    copy(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'), join(out, 'tree-sitter-bash.wasm'));
    copyWebTreeSitterRuntime(out);
    // node-pty looks for its addon in ./prebuilds/<os>-<arch>/ next to a bundle (lib/utils.js, "bundled").
    const pty = join(dirname(require.resolve('node-pty/package.json')), 'build/Release/pty.node');
    if (!existsSync(pty)) throw new Error(`node-pty's addon is missing (${pty}): run npm ci with a C++ compiler`);
    copy(pty, join(out, 'prebuilds', platform, 'pty.node'));
    const helper = nativeHelper('letkite-sandbox');
    if (helper) copy(helper, join(out, 'letkite-sandbox'));
    const launcher = nativeHelper('letkite-launch');
    if (launcher) copy(launcher, join(out, 'letkite-launch'));
    copy(join(root, 'infra/systemd/letkite-agent.service'), join(out, 'letkite-agent.service'));
    for (const f of readdirSync(out)) if (f.endsWith('.mjs')) asciiOnly(join(out, f));
    chmodSync(join(out, 'letkite-agent.mjs'), 0o755);
    const version = JSON.parse(readFileSync(join(root, 'apps/agent/package.json'), 'utf8')).version;
    const files = Object.fromEntries(
      filesUnder(out)
        .sort()
        .map((f) => [f, sha256(join(out, f))]),
    );
    const manifest = {
      name: 'letkite-agent',
      version,
      platform,
      node: '>=20.19',
      sandboxHelper: helper !== undefined,
      files,
    };
    writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  });
  pack(agentDir, join(dist, agentTarball));
}

/** Packs dist/agent as `agent/…` with fixed owners and times (the same input gives the same bytes). */
function pack(dir, tarball) {
  const partial = `${tarball}.partial`;
  const tar = spawnSync(
    'tar',
    ['--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner', '-cf', '-', '-C', dirname(dir), 'agent'],
    { maxBuffer: 1 << 30 },
  );
  if (tar.status !== 0) throw new Error(`tar failed: ${String(tar.stderr)}`);
  const gz = spawnSync('gzip', ['-9n'], { input: tar.stdout, maxBuffer: 1 << 30 });
  if (gz.status !== 0) throw new Error(`gzip failed: ${String(gz.stderr)}`);
  writeFileSync(partial, gz.stdout);
  renameSync(partial, tarball);
}

/** The newest modification time of the files under `paths` (relative to the root; a missing one counts as 0). */
function newestUnder(paths) {
  let newest = 0;
  const walk = (p) => {
    const s = statSync(p, { throwIfNoEntry: false });
    if (!s) return;
    if (!s.isDirectory()) {
      newest = Math.max(newest, s.mtimeMs);
      return;
    }
    for (const e of readdirSync(p)) if (e !== 'node_modules' && e !== 'dist' && !e.startsWith('.')) walk(join(p, e));
  };
  for (const p of paths) walk(join(root, p));
  return newest;
}

/** The inputs of the bundles: the apps' and packages' sources, migrations, the native helper, this script. */
const bundleInputs = [
  'apps/cli/src',
  'apps/gateway/src',
  'apps/gateway/drizzle',
  'apps/agent/src',
  'apps/agent/native',
  'packages',
  'tools/build',
  'infra/systemd',
];

function builtAt(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

const args = process.argv.slice(2);
const ifStale = args.includes('--if-stale');
// --keep-webapp: take apps/webapp/dist as it is unless it is missing (the build test: the web app is tested apart).
const keepWebapp = args.includes('--keep-webapp');
const targets = args.filter((a) => !a.startsWith('--'));
for (const a of args) {
  if (a.startsWith('--') && a !== '--if-stale' && a !== '--keep-webapp') throw new Error(`unknown option ${a}`);
}
const wanted = targets.length ? targets : ['cli', 'agent'];
for (const t of wanted) if (t !== 'cli' && t !== 'agent') throw new Error(`unknown build target "${t}" (cli, agent)`);

const started = performance.now();
const newest = ifStale ? newestUnder([...bundleInputs, 'apps/webapp/src']) : Number.POSITIVE_INFINITY;
if (wanted.includes('cli') && builtAt(join(dist, 'cli/main.mjs')) < newest) await buildCli();
if (wanted.includes('agent') && builtAt(join(dist, agentTarball)) < newest) {
  try {
    await buildAgent();
  } catch (err) {
    // Under `npm ci` / `npm start` a machine that cannot build the agent (no compiler for node-pty) still gets a
    // working gateway and CLI; the gateway then serves no agent for this platform and install.sh says so.
    if (!ifStale) throw err;
    console.error(`build: the agent bundle was not built: ${err instanceof Error ? err.message : String(err)}`);
  }
}
console.log(`build: ${wanted.join(' + ')} ready in dist/ (${Math.round(performance.now() - started)} ms)`);
