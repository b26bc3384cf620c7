import type { Parser, Tree as SitterTree, TreeCursor } from 'web-tree-sitter';
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
/** Whether dropping `bashParser` frees its wasm instance (grammar-loader.ts). */
let bashParserReleasable = false;
let loading: Promise<void> | undefined;

/**
 * Loads the bash grammar (once; later calls return at once, and after `unloadCommandRules()` load it again).
 * `evaluateCommand` is synchronous and needs this to have finished, so call it at start-up:
 * `await loadCommandRules()`.
 */
export async function loadCommandRules(): Promise<void> {
  if (bashParser) return;
  loading ??= loadBashParser()
    .then((loaded) => {
      bashParser = loaded.parser;
      bashParserReleasable = loaded.releasable;
    })
    .finally(() => {
      loading = undefined;
    });
  await loading;
}

/** Whether `loadCommandRules()` has finished (and no `unloadCommandRules()` came after it). */
export function commandRulesLoaded(): boolean {
  return bashParser !== undefined;
}

/**
 * Drops the parser, so its wasm instance (about 5 MiB of wasm memory, code and grammar) can be garbage-collected:
 * for a process that judges a command now and then (the agent) and calls `loadCommandRules()` again before the
 * next. Until then `evaluateCommand` throws (fail closed). Returns false, keeping the parser, when it cannot be
 * freed (a bundle built without web-tree-sitter's CommonJS copy shares one instance for good).
 */
export function unloadCommandRules(): boolean {
  if (!bashParser || !bashParserReleasable || loading) return false;
  bashParser = undefined;
  return true;
}

/**
 * One node of a parsed command, as plain JavaScript. The tree is copied out of tree-sitter's wasm memory in one
 * cursor walk right after the parse (issue #11's bench): web-tree-sitter's own `Node` copies the node into wasm
 * memory and calls into wasm for every `type`, `text`, `endIndex`…, and builds new `Node` objects for every
 * `children`, `parent`, `firstChild`…, which the walk asks for many times per node. Same names and meaning as
 * web-tree-sitter's `Node` for the members this package uses.
 */
export class Node {
  readonly children: Node[] = [];
  readonly namedChildren: Node[] = [];
  /** The field name of each child (parallel to `children`), null where it has none. */
  readonly fieldNames: (string | null)[] = [];
  parent: Node | null = null;
  /** The index of this node in its parent's `children`. */
  indexInParent = -1;
  private textCache: string | undefined;
  /** Exact for the root only (tree-sitter's own answer); see `hasError`. */
  rootHasError: boolean | undefined;

  constructor(
    private readonly source: string,
    readonly id: number,
    readonly type: string,
    readonly isNamed: boolean,
    readonly startIndex: number,
    readonly endIndex: number,
  ) {}

  get text(): string {
    this.textCache ??= this.source.slice(this.startIndex, this.endIndex);
    return this.textCache;
  }
  /** Whether the tree has a syntax error or a missing token; asked of the root only. */
  get hasError(): boolean {
    if (this.rootHasError === undefined) throw new Error('hasError is known for the root node only');
    return this.rootHasError;
  }
  get childCount(): number {
    return this.children.length;
  }
  get namedChildCount(): number {
    return this.namedChildren.length;
  }
  get firstChild(): Node | null {
    return this.children[0] ?? null;
  }
  get firstNamedChild(): Node | null {
    return this.namedChildren[0] ?? null;
  }
  get lastChild(): Node | null {
    return this.children[this.children.length - 1] ?? null;
  }
  get previousSibling(): Node | null {
    return this.parent?.children[this.indexInParent - 1] ?? null;
  }
  get nextSibling(): Node | null {
    return this.parent?.children[this.indexInParent + 1] ?? null;
  }
  child(index: number): Node | null {
    return this.children[index] ?? null;
  }
  namedChild(index: number): Node | null {
    return this.namedChildren[index] ?? null;
  }
  childForFieldName(name: string): Node | null {
    const index = this.fieldNames.indexOf(name);
    return index < 0 ? null : (this.children[index] ?? null);
  }
  childrenForFieldName(name: string): Node[] {
    return this.children.filter((_child, i) => this.fieldNames[i] === name);
  }
  /**
   * This node and its descendants of the given types, in document order, like tree-sitter's (which, over its
   * default range, also leaves out nodes that end at the very start of the text).
   */
  descendantsOfType(types: string | string[]): Node[] {
    const wanted = typeof types === 'string' ? [types] : types;
    const out: Node[] = [];
    const visit = (node: Node) => {
      if (node.endIndex === 0) return;
      if (wanted.includes(node.type)) out.push(node);
      for (const child of node.children) visit(child);
    };
    visit(this);
    return out;
  }
}

/** Whether each grammar symbol is named, asked of the grammar once per symbol. */
const namedSymbols = new Map<number, boolean>();

function symbolIsNamed(tree: SitterTree, typeId: number): boolean {
  let named = namedSymbols.get(typeId);
  if (named === undefined) {
    named = tree.language.nodeTypeIsNamed(typeId);
    namedSymbols.set(typeId, named);
  }
  return named;
}

function cursorNode(tree: SitterTree, cursor: TreeCursor, source: string, id: number): Node {
  // the type id is one call into wasm; its name and whether it is named come from the grammar's tables
  const typeId = cursor.nodeTypeId;
  const type = tree.language.types[typeId] || 'ERROR';
  return new Node(source, id, type, symbolIsNamed(tree, typeId), cursor.startIndex, cursor.endIndex);
}

/** Copies a parsed tree into plain `Node`s with one cursor walk. */
function copyTree(tree: SitterTree, source: string): Node {
  const cursor = tree.walk();
  const fields = tree.language.fields;
  let nextId = 1;
  try {
    const root = cursorNode(tree, cursor, source, nextId++);
    root.rootHasError = tree.rootNode.hasError;
    let parent = root;
    // descend, then walk siblings; go back up when a level is done
    if (cursor.gotoFirstChild()) {
      for (;;) {
        const node = cursorNode(tree, cursor, source, nextId++);
        node.parent = parent;
        node.indexInParent = parent.children.length;
        parent.children.push(node);
        parent.fieldNames.push(fields[cursor.currentFieldId] ?? null);
        if (node.isNamed) parent.namedChildren.push(node);
        if (cursor.gotoFirstChild()) {
          parent = node;
          continue;
        }
        while (!cursor.gotoNextSibling()) {
          if (!cursor.gotoParent() || parent === root) return root;
          parent = parent.parent as Node;
        }
      }
    }
    return root;
  } finally {
    cursor.delete();
  }
}

/** A parsed command: its root node. `delete()` is kept for the callers; the wasm tree is already freed. */
export interface Tree {
  rootNode: Node;
  delete(): void;
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
  try {
    const rootNode = copyTree(tree, text);
    return { ok: true, tree: { rootNode, delete() {} } };
  } finally {
    tree.delete();
  }
}
