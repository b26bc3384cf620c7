#!/usr/bin/env node
/**
 * Builds the Landlock helper: `cc -O2 -Wall -Werror native/letkite-sandbox.c -o native/build/letkite-sandbox`.
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
const sourceTime = mtimeMs(source);
if (sourceTime === undefined) fail(`source missing: ${source}`);
if (built !== undefined && built >= sourceTime) {
  console.log(`build-sandbox: ${output} is up to date`);
  process.exit(0);
}

const cc = process.env.CC || 'cc';
mkdirSync(dirname(output), { recursive: true });
// Compile next to the target and rename, so a half-written helper never sits at the path the agent executes.
const partial = `${output}.partial-${process.pid}`;
const result = spawnSync(cc, ['-O2', '-Wall', '-Werror', '-o', partial, source], { stdio: 'inherit' });
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
