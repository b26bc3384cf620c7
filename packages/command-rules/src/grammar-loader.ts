/**
 * The one place in this package that touches the file system: it reads web-tree-sitter's runtime and the
 * tree-sitter-bash grammar from node_modules (built: from beside the bundle), never from the network.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type * as WebTreeSitter from 'web-tree-sitter';
import type { Parser } from 'web-tree-sitter';

/** A bash parser, and whether dropping it frees its memory (see `freshWebTreeSitter`). */
export interface LoadedBashParser {
  parser: Parser;
  releasable: boolean;
}

/**
 * web-tree-sitter's CommonJS build to evaluate afresh: from node_modules, or built, from beside the bundle (the
 * standalone agent has no node_modules); null when a bundle was built without that copy.
 */
function commonJsRuntime(): string | null {
  if (!import.meta.letkiteBundle) return createRequire(import.meta.url).resolve('web-tree-sitter');
  const beside = fileURLToPath(new URL('./web-tree-sitter.cjs', import.meta.url));
  return existsSync(beside) ? beside : null;
}

/**
 * A web-tree-sitter of its own. The module keeps one wasm instance (its Memory, with the grammar linked into it)
 * for as long as the module lives and has no teardown, so a parser that is to be released again comes from a new
 * evaluation of the CommonJS build, kept out of require's cache and required through a fresh `createRequire`
 * (whose module's `children` is the only other reference to it). Without that build, the bundled copy: shared,
 * never freed.
 */
async function freshWebTreeSitter(): Promise<{ runtime: typeof WebTreeSitter; releasable: boolean }> {
  const path = commonJsRuntime();
  if (path === null) return { runtime: await import('web-tree-sitter'), releasable: false };
  const requireFresh = createRequire(path);
  delete requireFresh.cache[path];
  try {
    return { runtime: requireFresh(path) as typeof WebTreeSitter, releasable: true };
  } finally {
    delete requireFresh.cache[path];
  }
}

/** Loads web-tree-sitter and the bash grammar into a new instance and returns a parser for it. */
export async function loadBashParser(): Promise<LoadedBashParser> {
  const { runtime, releasable } = await freshWebTreeSitter();
  await runtime.Parser.init();
  const wasm = await readFile(
    import.meta.letkiteBundle
      ? new URL('./tree-sitter-bash.wasm', import.meta.url)
      : createRequire(import.meta.url).resolve('tree-sitter-bash/tree-sitter-bash.wasm'),
  );
  const language = await runtime.Language.load(new Uint8Array(wasm));
  const parser = new runtime.Parser();
  parser.setLanguage(language);
  return { parser, releasable };
}
