#!/usr/bin/env node
/**
 * Builds the sandbox helper: `cc -O2 -Wall -Werror -static native/letkite-sandbox.c -o native/build/letkite-sandbox`.
 * Static, so that no loader variable (LD_PRELOAD, LD_LIBRARY_PATH, GLIBC_TUNABLES via ld.so …) can act on it before
 * it has applied the sandbox. Where static linking is impossible (no libc.a: Debian/Ubuntu `libc6-dev` has it,
 * Fedora needs `glibc-static`) it links dynamically and says so; the agent still hands it only a fixed allowlist
 * environment, and `letkite-sandbox --probe` reports `"static": false`.
 * Runs as the agent package's `postinstall` (with `--if-possible`) and `build`. Skips when the binary is newer
 * than its source. Linux only: elsewhere there is nothing to build.
 *
 * Without a compiler, `build` fails; `postinstall --if-possible` prints the same clear error but lets the install
 * finish, because the agent refuses `shell = "sandboxed"` at run time when the helper is missing (fail closed).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ifPossible = process.argv.includes('--if-possible');
const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(packageDir, 'native', 'letkite-sandbox.c');
const output = join(packageDir, 'native', 'build', 'letkite-sandbox');

function mtimeMs(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

function fail(message) {
  // A helper older than its source must not keep running in its place: remove it, so the agent refuses instead.
  rmSync(output, { force: true });
  console.error(`build-sandbox: ${message}`);
  if (ifPossible) {
    console.error(
      'build-sandbox: continuing without it; sandboxed shells will be refused until `npm run build -w @letkite/agent` succeeds',
    );
    process.exit(0);
  }
  process.exit(1);
}

if (process.platform !== 'linux') {
  console.log(`build-sandbox: nothing to build on ${process.platform} (the Landlock helper is Linux only)`);
  process.exit(0);
}

const built = mtimeMs(output);
// The flags live here: a newer build script makes the helper stale too.
const sourceTime = Math.max(mtimeMs(source) ?? Number.NaN, mtimeMs(fileURLToPath(import.meta.url)) ?? 0);
if (Number.isNaN(sourceTime)) fail(`source missing: ${source}`);
if (built !== undefined && built >= sourceTime) {
  console.log(`build-sandbox: ${output} is up to date`);
  process.exit(0);
}

const cc = process.env.CC || 'cc';
mkdirSync(dirname(output), { recursive: true });
// Compile next to the target and rename, so a half-written helper never sits at the path the agent executes.
const partial = `${output}.partial-${process.pid}`;
const flags = ['-O2', '-Wall', '-Werror', '-o', partial, source];
let result = spawnSync(cc, ['-static', ...flags], { stdio: ['ignore', 'inherit', 'pipe'] });
if (!result.error && result.status !== 0) {
  const why = String(result.stderr ?? '').trim();
  console.error(
    `build-sandbox: static linking failed (${why.split('\n').pop() || `exit ${result.status}`}); linking dynamically.` +
      ' Install the static C library (libc6-dev / glibc-static) for a helper no loader variable can touch.',
  );
  rmSync(partial, { force: true });
  result = spawnSync(cc, flags, { stdio: 'inherit' });
} else if (result.stderr?.length) {
  process.stderr.write(result.stderr);
}
if (result.error) {
  rmSync(partial, { force: true });
  if (result.error.code === 'ENOENT') {
    fail(`no C compiler found ("${cc}"); install one (Debian/Ubuntu: apt-get install gcc libc6-dev) or set CC`);
  }
  fail(`could not run "${cc}": ${result.error.message}`);
}
if (result.status !== 0) {
  rmSync(partial, { force: true });
  fail(`"${cc}" failed with exit code ${result.status ?? `signal ${result.signal}`}`);
}
renameSync(partial, output);
console.log(`build-sandbox: built ${output}`);
