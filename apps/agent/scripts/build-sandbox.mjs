#!/usr/bin/env node
/**
 * Builds the agent's two native helpers, each `cc -O2 -Wall -Werror -static native/NAME.c -o native/build/NAME`:
 *   letkite-sandbox  the Landlock helper that confines sandboxed commands;
 *   letkite-launch   the exec launcher, the small process that forks and execs `exec` commands (issue #16).
 * Static, so that no loader variable (LD_PRELOAD, LD_LIBRARY_PATH, GLIBC_TUNABLES via ld.so …) can act on them,
 * and so that the launcher's fork copies as few page tables as possible. Where static linking is impossible
 * (no libc.a: Debian/Ubuntu `libc6-dev` has it, Fedora needs `glibc-static`) it links dynamically and says so;
 * the agent still hands them only a fixed allowlist environment, and `letkite-sandbox --probe` reports
 * `"static": false`.
 * Runs as the agent package's `postinstall` (with `--if-possible`) and `build`. Skips a helper newer than its
 * source and this script. Linux only: elsewhere there is nothing to build.
 *
 * Without a compiler, `build` fails; `postinstall --if-possible` prints the same clear error but lets the install
 * finish: the agent refuses `shell = "sandboxed"` at run time when the sandbox helper is missing (fail closed),
 * and spawns `exec` commands in its own process when the launcher is missing (slower, same behaviour).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ifPossible = process.argv.includes('--if-possible');
const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const helpers = [
  { name: 'letkite-sandbox', without: 'sandboxed shells will be refused' },
  { name: 'letkite-launch', without: 'exec commands will be spawned in the agent process (slower)' },
];

function mtimeMs(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Builds one helper; returns an error message, or undefined when it is built (or up to date). */
function build(name) {
  const source = join(packageDir, 'native', `${name}.c`);
  const output = join(packageDir, 'native', 'build', name);
  const built = mtimeMs(output);
  // The flags live here: a newer build script makes the helper stale too.
  const sourceTime = Math.max(mtimeMs(source) ?? Number.NaN, mtimeMs(fileURLToPath(import.meta.url)) ?? 0);
  if (Number.isNaN(sourceTime)) return `source missing: ${source}`;
  if (built !== undefined && built >= sourceTime) {
    console.log(`build-sandbox: ${output} is up to date`);
    return undefined;
  }
  // A helper older than its source must not keep running in its place: remove it first, so that a failed build
  // leaves none (the agent then refuses sandboxed shells, or spawns in-process).
  rmSync(output, { force: true });
  const cc = process.env.CC || 'cc';
  mkdirSync(dirname(output), { recursive: true });
  // Compile next to the target and rename, so a half-written helper never sits at the path the agent executes.
  const partial = `${output}.partial-${process.pid}`;
  const flags = ['-O2', '-Wall', '-Werror', '-o', partial, source];
  let result = spawnSync(cc, ['-static', ...flags], { stdio: ['ignore', 'inherit', 'pipe'] });
  if (!result.error && result.status !== 0) {
    const why = String(result.stderr ?? '').trim();
    console.error(
      `build-sandbox: ${name}: static linking failed (${why.split('\n').pop() || `exit ${result.status}`}); linking` +
        ' dynamically. Install the static C library (libc6-dev / glibc-static) for a helper no loader variable can touch.',
    );
    rmSync(partial, { force: true });
    result = spawnSync(cc, flags, { stdio: 'inherit' });
  } else if (result.stderr?.length) {
    process.stderr.write(result.stderr);
  }
  if (result.error) {
    rmSync(partial, { force: true });
    if (result.error.code === 'ENOENT') {
      return `no C compiler found ("${cc}"); install one (Debian/Ubuntu: apt-get install gcc libc6-dev) or set CC`;
    }
    return `could not run "${cc}": ${result.error.message}`;
  }
  if (result.status !== 0) {
    rmSync(partial, { force: true });
    return `"${cc}" failed with exit code ${result.status ?? `signal ${result.signal}`}`;
  }
  renameSync(partial, output);
  console.log(`build-sandbox: built ${output}`);
  return undefined;
}

if (process.platform !== 'linux') {
  console.log(`build-sandbox: nothing to build on ${process.platform} (the native helpers are Linux only)`);
  process.exit(0);
}

let failed = false;
for (const { name, without } of helpers) {
  const error = build(name);
  if (error === undefined) continue;
  failed = true;
  console.error(`build-sandbox: ${name}: ${error}`);
  if (ifPossible) {
    console.error(
      `build-sandbox: continuing without ${name}; ${without} until \`npm run build -w @letkite/agent\` succeeds`,
    );
  }
}
process.exit(failed && !ifPossible ? 1 : 0);
