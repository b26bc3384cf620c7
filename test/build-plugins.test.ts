import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import { afterAll, describe, expect, test } from 'vitest';
import { protocolWithoutSideEffects, zodEnglishOnly } from '../tools/build/esbuild-plugins.mjs';
import { removeDir, repoRoot, tempDir } from './support/processes';

// Issue #13: the agent bundle keeps zod's English messages only and the @letkite/protocol modules it imports from
// (tools/build/esbuild-plugins.mjs). These bundle small entries with and without the plugins and run them.

const dir = tempDir('letkite-build-plugins-');
afterAll(() => removeDir(dir));

async function bundle(name: string, contents: string, plugins: esbuild.Plugin[]) {
  const outfile = join(dir, `${name}.mjs`);
  const result = await esbuild.build({
    stdin: { contents, resolveDir: repoRoot, loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    plugins,
    metafile: true,
    logLevel: 'silent',
  });
  // The modules that put code in the bundle (metafile.inputs also lists those tree-shaking dropped).
  const output = Object.values(result.metafile.outputs)[0];
  const inputs = Object.entries(output?.inputs ?? {}).flatMap(([path, i]) => (i.bytesInOutput > 0 ? [path] : []));
  return { outfile, inputs };
}

function run(args: string[]): string {
  const r = spawnSync(process.execPath, args, { cwd: repoRoot, encoding: 'utf8' });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return r.stdout;
}

/** zod's messages for a spread of issue kinds, one JSON line. */
const zodMessages = `
import { z } from 'zod';
const cases = [
  [z.string().min(3), 'a'],
  [z.number().max(2), 5],
  [z.object({ a: z.string() }).strict(), { b: 1 }],
  [z.enum(['x', 'y']), 'z'],
  [z.email(), 'not-an-email'],
  [z.array(z.int()).length(2), [1.5]],
  [z.union([z.string(), z.boolean()]), 3],
  [z.literal('on'), 'off'],
];
console.log(JSON.stringify({
  locales: Object.keys(z.locales),
  messages: cases.flatMap(([schema, value]) => schema.safeParse(value).error.issues.map((i) => i.message)),
}));
`;

describe('zodEnglishOnly', () => {
  test('the bundle holds the English locale alone and gives the same messages as zod from node_modules', async () => {
    const plain = JSON.parse(run(['--input-type=module', '-e', zodMessages]));
    const { outfile, inputs } = await bundle('zod-en', zodMessages, [zodEnglishOnly]);
    const bundled = JSON.parse(run([outfile]));
    expect(plain.locales.length).toBeGreaterThan(40);
    expect(bundled.locales).toEqual(['en']);
    expect(bundled.messages).toEqual(plain.messages);
    expect(bundled.messages).toContain('Too small: expected string to have >=3 characters');
    expect(inputs.filter((i) => i.startsWith('node_modules/zod/v4/locales/'))).toEqual([
      'node_modules/zod/v4/locales/en.js',
    ]);
    expect(readFileSync(outfile, 'utf8')).not.toContain('locales/de.js');
  });
});

describe('protocolWithoutSideEffects', () => {
  const entry = `import { LetKiteError } from '@letkite/protocol';\nconsole.log(new LetKiteError('internal', 'x').code);\n`;
  const toolModules = (inputs: string[]) => inputs.filter((i) => i.startsWith('packages/protocol/src/tools/'));

  test('a bundle that imports no MCP tool descriptor holds none of their modules, and still runs', async () => {
    const without = await bundle('protocol-plain', entry, []);
    expect(toolModules(without.inputs).length).toBeGreaterThan(5);
    const pure = await bundle('protocol-pure', entry, [protocolWithoutSideEffects]);
    expect(toolModules(pure.inputs)).toEqual([]);
    expect(run([pure.outfile]).trim()).toBe('internal');
  });

  test('a tool descriptor that is imported is kept, with what it imports', async () => {
    const { outfile, inputs } = await bundle(
      'protocol-exec',
      `import { exec } from '@letkite/protocol';\nconsole.log(exec.name);\n`,
      [protocolWithoutSideEffects],
    );
    expect(toolModules(inputs)).toEqual(
      expect.arrayContaining(['packages/protocol/src/tools/exec.ts', 'packages/protocol/src/tools/common.ts']),
    );
    expect(toolModules(inputs)).not.toContain('packages/protocol/src/tools/terminals.ts');
    expect(run([outfile]).trim()).toBe('exec');
  });
});
