import type { Node, Parser, Tree } from 'web-tree-sitter';
import { loadBashParser } from './grammar-loader';

/** Longest command line parsed at all; longer ones are refused without parsing. */
export const maxCommandLength = 64 * 1024;

/**
 * The parse deadline, counted in tree-sitter progress callbacks (one per ~100 parser operations) rather than in
 * milliseconds: the gateway and the agent must reach the same verdict for the same text, and a clock would make
 * the answer depend on machine load. A normal 40 KiB script takes about 650.
 */
export const parseOperationBudget = 4000;

let bashParser: Parser | undefined;

/**
 * Loads the bash grammar (once; later calls return at once). `evaluateCommand` is synchronous and needs this to
 * have finished, so call it at start-up: `await loadCommandRules()`.
 */
export async function loadCommandRules(): Promise<void> {
  bashParser ??= await loadBashParser();
}

/** Whether `loadCommandRules()` has finished. */
export function commandRulesLoaded(): boolean {
  return bashParser !== undefined;
}

export type ParseOutcome = { ok: true; tree: Tree } | { ok: false; message: string };

/** Parses shell text within the length limit and the parse deadline. The caller deletes the tree. */
export function parseShellText(text: string): ParseOutcome {
  const parser = bashParser;
  if (!parser) throw new Error('command rules are not loaded: await loadCommandRules() before evaluateCommand()');
  if (text.length > maxCommandLength) {
    return { ok: false, message: `command is longer than ${maxCommandLength} characters` };
  }
  let progress = 0;
  // The callback's declared type says void, but returning true is what cancels the parse.
  const progressCallback = (() => ++progress > parseOperationBudget) as () => void;
  const tree = parser.parse(text, null, { progressCallback });
  if (!tree) {
    parser.reset();
    return { ok: false, message: 'the command took too long to parse' };
  }
  return { ok: true, tree };
}

export type { Node, Tree };
