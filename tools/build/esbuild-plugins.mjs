/**
 * esbuild plugins that keep out of a bundle what it never runs (issue #13: the idle agent's memory; measured with
 * bench/memory/attribute.ts). Used by build.mjs; test/build-plugins.test.ts bundles with them.
 */
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Marks @letkite/protocol's modules as free of side effects, so a bundle drops the ones it imports nothing from.
 * The package is pure (zod schemas and functions, no I/O; see its index.ts), but every schema is a call esbuild
 * must otherwise keep: the agent bundle carried the MCP tool descriptors (src/tools/*), which only the gateway uses,
 * and built their schemas at start. The package's API is unchanged; this only decides what a bundle keeps.
 */
export const protocolWithoutSideEffects = {
  name: 'protocol-without-side-effects',
  setup(build) {
    const protocolSource = `${sep}packages${sep}protocol${sep}src${sep}`;
    build.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === protocolWithoutSideEffects) return undefined;
      const fromProtocol = args.importer.includes(protocolSource) && args.path.startsWith('.');
      if (!fromProtocol && !args.path.startsWith('@letkite/protocol')) return undefined;
      const resolved = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: protocolWithoutSideEffects,
      });
      if (resolved.errors.length > 0) return { errors: resolved.errors };
      return { ...resolved, sideEffects: false };
    });
  },
};

/**
 * Resolves `@letkite/protocol` to its core (packages/protocol/src/core.ts) in the standalone agent bundle. The
 * package's index re-exports every op group's schemas for the gateway; a module the index re-exports lands in the
 * agent's first chunk even when only a chunk loaded later uses it (esbuild places files by import edges), so the
 * idle agent would build them all. With the core as its index, an agent module takes another group's schemas from
 * `@letkite/protocol/ops-*`, in the chunk of the feature that uses them (apps/agent/src/ops/features.ts); one that
 * takes them from the index does not build ("No matching export"), instead of quietly costing memory.
 */
export const protocolCoreForAgent = {
  name: 'protocol-core-for-agent',
  setup(build) {
    build.onResolve({ filter: /^@letkite\/protocol$/ }, () => ({
      path: join(dirname(fileURLToPath(import.meta.url)), '../../packages/protocol/src/core.ts'),
      sideEffects: false,
    }));
  },
};

/**
 * Bundles zod's English messages only. zod's namespace re-exports every locale (`z.locales`, 366 KB of source in
 * the agent bundle, each one evaluated at start), and the namespace object keeps them all; LetKite never calls
 * `z.config(z.locales.xx())`, and English is zod's default (schemas.js configures `en` on the first schema), so
 * `z.locales` keeps `en` alone and every message stays the same.
 */
export const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${sep}node_modules${sep}zod${sep}`)
        ? { path: join(args.resolveDir, '../locales/index.js'), namespace: 'zod-english-only' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(join(dirname(args.path), 'en.js'))};\n`,
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
  },
};
