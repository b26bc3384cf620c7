/**
 * The one place in this package that touches the file system: it reads web-tree-sitter's runtime and the
 * tree-sitter-bash grammar from node_modules, once, never from the network.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Language, Parser } from 'web-tree-sitter';

let loading: Promise<Parser> | undefined;

/** Loads the bash grammar once and returns a parser for it; later calls share the same promise. */
export function loadBashParser(): Promise<Parser> {
  loading ??= (async () => {
    const require = createRequire(import.meta.url);
    await Parser.init();
    // Built (tools/build), the grammar is copied next to the bundle: the standalone agent has no node_modules.
    const wasm = await readFile(
      import.meta.letkiteBundle
        ? new URL('./tree-sitter-bash.wasm', import.meta.url)
        : require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'),
    );
    const language = await Language.load(new Uint8Array(wasm));
    const parser = new Parser();
    parser.setLanguage(language);
    return parser;
  })().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}
