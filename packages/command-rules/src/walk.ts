import { type Analysis, maxNestingDepth, type StdinFeed, words } from './analysis';
import { checkSpawnLoop } from './builtin-layers';
import { analyzeInvocation } from './invocation';
import { isDiskDevice, isHarmlessDevice } from './paths';
import {
  assignmentConcern,
  checkArithmeticText,
  checkDeclarationArgs,
  type Embedded,
  forgetAssignedIn,
  isNumericValue,
  ShellState,
  scanEmbedded,
  shownText,
  splitParameter,
} from './shell-language';
import { type Node, parseShellText } from './shell-parser';
import type { Arg, Segment } from './types';
import { argFromSegments, expandBraces, literalArg, unknownArg, wordSegments } from './words';

/** Grammar nodes that are (part of) one word of a command. */
const argumentNodes = new Set([
  'word',
  'string',
  'raw_string',
  'ansi_c_string',
  'translated_string',
  'concatenation',
  'number',
  'simple_expansion',
  'expansion',
  'command_substitution',
  'process_substitution',
  'arithmetic_expansion',
  'brace_expression',
]);

interface WalkContext {
  acc: Analysis;
  depth: number;
  stdin: StdinFeed | undefined;
  /** Variables last set to a literal in this text: used for evidence only (`x=rm; $x -rf /`), never as proof. */
  vars: Map<string, string>;
}

/** Parses shell text and collects every command in it (recursively, at the given nesting depth). */
export function analyzeShellText(text: string, acc: Analysis, depth: number, stdin?: StdinFeed): void {
  if (depth > maxNestingDepth) {
    acc.opaque([], `shell code nested more than ${maxNestingDepth} levels deep`);
    return;
  }
  // each piece of shell text is a shell of its own (or `eval`): start with nothing known about its variables
  const outer = acc.shell;
  acc.shell = new ShellState();
  try {
    analyzeParsed(text, acc, depth, stdin, 0);
  } finally {
    acc.shell = outer;
    // `eval 'n=$x'` runs in this shell: what it may assign is no longer known to be a number
    forgetAssignedIn(text, outer);
  }
}

/** How many times one text is rewritten into the shell's reading (delimiters, continuations) before giving up. */
const maxRewrites = 4;

function analyzeParsed(text: string, acc: Analysis, depth: number, stdin: StdinFeed | undefined, rewrites: number) {
  if (text.includes('\0')) {
    acc.parseProblem('the command contains a NUL character, which the shell does not read the way the rules do');
    text = text.replaceAll('\0', ' ');
  }
  // a here-document whose delimiter ends the text without a newline still ends there for the shell
  const source = text.includes('<<') && !text.endsWith('\n') ? `${text}\n` : text;
  const parsed = parseShellText(source);
  if (!parsed.ok) {
    acc.parseProblem(parsed.message);
    return;
  }
  try {
    const root = parsed.tree.rootNode;
    const delimiters = source.includes('<<') ? rewriteHeredocDelimiters(root, source) : undefined;
    const lexing = delimiters === undefined ? lexicalProblems(root, source) : {};
    const rewritten = delimiters ?? lexing.joined;
    if (rewritten !== undefined) {
      if (rewrites < maxRewrites) {
        // partly quoted delimiters, `ls\<newline>/x` (the one word `ls/x`): read the text the way the shell does
        analyzeParsed(rewritten, acc, depth, stdin, rewrites + 1);
        return;
      }
      acc.parseProblem('the rules cannot read this text the way the shell does');
    }
    if (root.hasError) acc.parseProblem('the command does not parse as shell syntax');
    if (lexing.problem) acc.parseProblem(lexing.problem);
    walk(root, { acc, depth, stdin, vars: new Map() });
  } finally {
    parsed.tree.delete();
  }
}

/**
 * Here-document delimiters that are partly quoted (`<<E"O"F`, `<<'E'OF`): bash removes the quotes and does not
 * expand the body; the grammar loses track of where the body ends. Rewritten as `<<'EOF'`, which it reads right.
 * Returns the rewritten text, or undefined when there is nothing to rewrite.
 */
function rewriteHeredocDelimiters(root: Node, text: string): string | undefined {
  const starts = root.descendantsOfType('heredoc_start').filter((node): node is Node => node !== null);
  const edits: Array<[number, number, string]> = [];
  for (const start of starts) {
    let i = start.startIndex;
    let value = '';
    let quoted = false;
    while (i < text.length && !/[\s;&|<>()]/.test(text[i] as string)) {
      const ch = text[i] as string;
      if (ch === "'" || ch === '"') {
        const end = ch === "'" ? text.indexOf("'", i + 1) : text.indexOf('"', i + 1);
        if (end < 0) return undefined;
        value += text.slice(i + 1, end);
        quoted = true;
        i = end + 1;
      } else if (ch === '\\' && text[i + 1] === '\n') {
        i += 2; // a line continuation inside the delimiter word
      } else if (ch === '\\') {
        value += text[i + 1] ?? '';
        quoted = true;
        i += 2;
      } else {
        value += ch;
        i++;
      }
    }
    const word = text.slice(start.startIndex, i);
    const simple = /^'[^']*'$/.test(word) || /^"[^"\\$`]*"$/.test(word) || /^\\?[^'"\\]*$/.test(word);
    if (!quoted || simple || value.includes("'") || value === '') continue;
    edits.push([start.startIndex, i, `'${value}'`]);
  }
  if (edits.length === 0) return undefined;
  let out = '';
  let at = 0;
  for (const [from, to, replacement] of edits.sort((a, b) => a[0] - b[0])) {
    out += text.slice(at, from) + replacement;
    at = to;
  }
  return out + text.slice(at);
}

/** Characters the grammar may skip as blanks between tokens, but the shell reads as part of a word. */
const suspiciousText = /[\r\v\f\\#\u0085\u00a0\u1680\u2000-\u200b\u2028\u2029\u202f\u205f\u3000\ufeff]/;
/** Nodes whose inside is one token for this check (their text is quoted or read by other code). */
const atomicNodes = new Set([
  'word',
  'raw_string',
  'ansi_c_string',
  'string_content',
  'heredoc_body',
  'heredoc_start',
  'heredoc_end',
  'comment',
  'regex',
  'expansion',
  'number',
  'extglob_pattern',
]);
const operatorChars = /[;&|()<>\s]/;

/**
 * Where the parse tree and the shell may disagree about the words: text between tokens that is not a blank
 * (a CR, a vertical tab, a backslash-newline inside a word), and comments that are not comments (`a#b`).
 * Returns the text with the backslash-newlines between tokens removed, as the shell reads it, when there are any.
 */
function lexicalProblems(root: Node, text: string): { problem?: string; joined?: string } {
  if (!suspiciousText.test(text)) return {};
  const leaves: Node[] = [];
  const collect = (node: Node) => {
    if (node.childCount === 0 || atomicNodes.has(node.type)) {
      if (node.endIndex > node.startIndex) leaves.push(node);
      return;
    }
    for (const child of node.children) if (child) collect(child);
  };
  collect(root);
  leaves.sort((a, b) => a.startIndex - b.startIndex);
  let problem: string | undefined;
  const joins: Array<[number, number]> = [];
  let previousEnd = 0;
  for (const leaf of leaves) {
    if (leaf.startIndex < previousEnd) continue;
    const gap = text.slice(previousEnd, leaf.startIndex);
    if (gap) {
      const withoutContinuations = gap.replace(/\\\n/g, '');
      if (!/^[ \t\n]*$/.test(withoutContinuations)) {
        problem ??= 'the text has characters between words that the shell reads as part of a word (CR, form feed, …)';
      } else if (gap.includes('\\\n')) {
        // the shell removes every backslash-newline before it splits words (`ls\<nl>/x` is `ls/x`, `2\<nl>>` is `2>`)
        joins.push([previousEnd, leaf.startIndex]);
      }
    }
    if (leaf.type === 'comment') {
      const before = text[leaf.startIndex - 1];
      if (before !== undefined && !operatorChars.test(before))
        problem ??= `the shell does not read ${JSON.stringify(leaf.text.slice(0, 20))} as a comment`;
    } else if (leaf.type === 'word' && leaf.text.startsWith('#')) {
      const before = text[leaf.startIndex - 1];
      if (before === undefined || /[\s;&|()]/.test(before))
        problem ??= `the shell reads ${JSON.stringify(leaf.text.slice(0, 20))} as a comment`;
    }
    previousEnd = leaf.endIndex;
  }
  const tail = text.slice(previousEnd);
  if (!/^[ \t\n]*$/.test(tail.replace(/\\\n/g, '')) && !/^\\$/.test(tail.trimEnd()))
    problem ??= 'the text ends with characters the grammar did not read';
  if (joins.length > 0 && !problem) {
    let joined = '';
    let at = 0;
    for (const [start, end] of joins) {
      joined += text.slice(at, start) + text.slice(start, end).replace(/\\\n/g, '');
      at = end;
    }
    return { joined: joined + text.slice(at) };
  }
  return problem ? { problem } : {};
}

function walkChildren(node: Node, ctx: WalkContext): void {
  for (const child of node.namedChildren) if (child) walk(child, ctx);
}

/** Whether a word-level node can contain a command: only through `$(`, backticks or process substitution. */
function mayHoldCommands(node: Node): boolean {
  const text = node.text;
  return text.includes('$') || text.includes('`') || text.includes('<(') || text.includes('>(');
}

function walk(node: Node, ctx: WalkContext): void {
  checkSpawnLoop(node, ctx.acc);
  switch (node.type) {
    case 'command':
      visitCommand(node, ctx);
      return;
    case 'pipeline':
      visitPipeline(node, ctx);
      return;
    case 'redirected_statement':
      visitRedirectedStatement(node, ctx);
      return;
    case 'function_definition':
      visitFunction(node, ctx);
      return;
    case 'variable_assignment':
      checkAssignment(node, ctx);
      rememberAssignment(node, ctx);
      walkChildren(node, ctx);
      return;
    case 'ERROR':
      visitError(node, ctx);
      return;
    case 'declaration_command':
      visitDeclaration(node, ctx);
      return;
    case 'unset_command':
      for (const child of node.namedChildren) if (child) checkQuotedArithmetic(child, ctx, node.text);
      walkChildren(node, ctx);
      return;
    case 'test_command':
      visitTest(node, ctx);
      return;
    case 'compound_statement':
      if (node.firstChild?.type === '((') checkArithmeticNode(node, ctx);
      walkChildren(node, ctx);
      return;
    case 'c_style_for_statement':
      forgetLoopAssignments(node, ctx);
      checkArithmeticNode(node, ctx);
      walkChildren(node, ctx);
      return;
    case 'arithmetic_expansion':
      checkArithmeticNode(node, ctx);
      walkChildren(node, ctx);
      return;
    case 'subscript':
      checkQuotedArithmetic(node, ctx, node.text);
      walkChildren(node, ctx);
      return;
    case 'for_statement':
      forgetLoopAssignments(node, ctx);
      visitFor(node, ctx);
      return;
    case 'while_statement':
      forgetLoopAssignments(node, ctx);
      walkChildren(node, ctx);
      return;
    case 'expansion':
      visitExpansion(node.text, ctx, node.parent?.type === 'string');
      return;
    case 'command_substitution':
      if (node.text.startsWith('`')) {
        // inside backticks `\`` is a backtick again (a nested substitution) and `\$`, `\\` lose the backslash
        analyzeShellText(node.text.slice(1, -1).replace(/\\([`$\\])/g, '$1'), ctx.acc, ctx.depth + 1);
        return;
      }
      walkChildren(node, { ...ctx, stdin: undefined });
      return;
    case 'process_substitution':
      walkChildren(node, { ...ctx, stdin: undefined });
      return;
    case 'file_redirect':
    case 'herestring_redirect':
      checkRedirect(node, ctx, []);
      walkChildren(node, ctx);
      return;
    case 'comment':
    case 'word':
    case 'raw_string':
    case 'number':
      return;
    default:
      walkChildren(node, ctx);
  }
}

/** A loop's second pass runs after its own assignments: forget the numbers it may overwrite with other values. */
function forgetLoopAssignments(node: Node, ctx: WalkContext): void {
  if (ctx.acc.shell.numeric.size === 0) return;
  const spans = node
    .descendantsOfType(['arithmetic_expansion', 'compound_statement', 'c_style_for_statement'])
    .filter((n): n is Node => n !== null && (n.type !== 'compound_statement' || n.firstChild?.type === '(('))
    .map((n) => {
      // of a `for ((…))` only the header is arithmetic
      const end = n.type === 'c_style_for_statement' ? n.startIndex + n.text.indexOf('))') + 2 : n.endIndex;
      return [n.startIndex - node.startIndex, end - node.startIndex] as const;
    });
  forgetAssignedIn(node.text, ctx.acc.shell, spans);
}

/** The arithmetic inside `$((…))`, `$[…]`, `((…))` or `for ((…))`: assignments and variables evaluated as code. */
function checkArithmeticNode(node: Node, ctx: WalkContext): void {
  const text = node.text;
  let inner: string;
  if (node.type === 'arithmetic_expansion') inner = text.startsWith('$[') ? text.slice(2, -1) : text.slice(3, -2);
  else if (node.type === 'compound_statement') inner = text.slice(2, -2);
  else {
    const open = text.indexOf('((');
    const close = text.indexOf('))', open);
    inner = text.slice(open + 2, close < 0 ? undefined : close);
  }
  checkArithmeticText(inner, ctx.acc, ctx.acc.shell, shownText(text));
}

/** `${…}`: the operator words are not parsed by the grammar, so their substitutions are found here. */
function visitExpansion(text: string, ctx: WalkContext, quoted: boolean): void {
  const quoting = quoted ? 'double' : 'unquoted';
  handleEmbedded(scanEmbedded(text, quoting), ctx, text, quoting);
}

function handleEmbedded(
  found: Embedded,
  ctx: WalkContext,
  text: string,
  quoting: 'unquoted' | 'double' | 'heredoc' = 'unquoted',
): void {
  const shown = shownText(text);
  const { acc } = ctx;
  if (found.broken) acc.parseProblem(`the rules cannot read where a substitution in ${shown[0]?.display} ends`);
  for (const code of found.commands) analyzeShellText(code, acc, ctx.depth + 1);
  for (const arithmetic of found.arithmetic) checkArithmeticText(arithmetic, acc, acc.shell, shown);
  // inside double quotes (and here-documents) single quotes in an operator word do not quote
  const inner = quoting === 'unquoted' ? 'unquoted' : 'double';
  for (const body of found.parameters) visitParameter(body, ctx, shown, inner);
}

function visitParameter(body: string, ctx: WalkContext, shown: Arg[], quoting: 'unquoted' | 'double'): void {
  const { acc } = ctx;
  const parts = splitParameter(body);
  if (!parts) {
    acc.opaque(shown, 'the rules cannot read this parameter expansion');
    return;
  }
  if (parts.indirect && parts.operator === '' && parts.word === '' && parts.subscript === undefined) {
    const known = ctx.vars.get(parts.name);
    if (known === undefined || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(known))
      acc.opaque(shown, `\${!${parts.name}} reads a variable named at run time, whose subscript can run code`);
  }
  if (parts.subscript !== undefined && parts.subscript !== '@' && parts.subscript !== '*') {
    checkArithmeticText(parts.subscript, acc, acc.shell, shown);
    handleEmbedded(scanEmbedded(parts.subscript, 'unquoted'), ctx, parts.subscript);
  }
  if (parts.operator === '=' || parts.operator === ':=') {
    // `${PATH:=dir}` assigns when the variable is unset or empty
    const concern = assignmentConcern(parts.name);
    if (concern) acc.opaque(shown, concern.message, concern.verdict);
    acc.shell.numeric.delete(parts.name);
    ctx.vars.delete(parts.name);
  }
  if (parts.operator === '@P') {
    const known = ctx.vars.get(parts.name);
    if (known === undefined || /[$`\\]/.test(known))
      acc.opaque(shown, `\${${parts.name}@P} expands the value as a prompt, which runs $(…) in it`);
  }
  if (parts.operator === ':') {
    // `${x:offset:length}`: both are arithmetic
    for (const piece of parts.word.split(':')) if (piece.trim()) checkArithmeticText(piece, acc, acc.shell, shown);
  }
  if (parts.word) handleEmbedded(scanEmbedded(parts.word, quoting), ctx, parts.word, quoting);
}

/** `for NAME in WORDS`: NAME is assigned; a NAME that matters is not allowed. */
function visitFor(node: Node, ctx: WalkContext): void {
  const variable = node.childForFieldName('variable');
  const values = node.childrenForFieldName('value').filter((child): child is Node => child !== null);
  if (variable) {
    const name = variable.text;
    const concern = assignmentConcern(name);
    if (concern) ctx.acc.opaque(shownText(`for ${name} in …`), `the loop ${concern.message}`, concern.verdict);
    const numeric =
      values.length > 0 &&
      values.every((value) => argsOfNode(value).every((arg) => isNumericValue(arg, ctx.acc.shell)));
    if (numeric) ctx.acc.shell.numeric.add(name);
    else ctx.acc.shell.numeric.delete(name);
    ctx.vars.delete(name);
  }
  walkChildren(node, ctx);
}

/** `declare`, `typeset`, `local`, `export`, `readonly`: judged like the builtin; printing forms are commands. */
function visitDeclaration(node: Node, ctx: WalkContext): void {
  const keyword = node.firstChild?.text ?? 'declare';
  const args: Arg[] = [literalArg(keyword)];
  let assigns = false;
  for (const child of node.namedChildren) {
    if (!child || child.type === 'comment') continue;
    if (child.type === 'variable_assignment') {
      assigns = true;
      args.push(assignmentArg(child));
      checkSubscriptOf(child, ctx);
      rememberAssignment(child, ctx);
    } else args.push(...argsOfNode(child));
  }
  checkDeclarationArgs(args, ctx.acc);
  // `declare -p`, `export -p`, `declare -f name` print: commands the rules must see
  if (!assigns) ctx.acc.addCommand(args);
  for (const child of node.namedChildren) {
    if (!child || !mayHoldCommands(child)) continue;
    if (child.type === 'variable_assignment') walkChildren(child, ctx);
    else walk(child, ctx);
  }
}

/** An assignment as one word: `NAME=value` with the value's segments. */
function assignmentArg(node: Node): Arg {
  const name = node.childForFieldName('name');
  const value = node.childForFieldName('value');
  const nameDynamic = name ? mayHoldCommands(name) : false;
  const segments: Segment[] = [
    nameDynamic ? { dyn: name?.text ?? '', quoted: true } : { lit: `${name?.text ?? ''}=`, quoted: true },
  ];
  if (nameDynamic) segments.push({ lit: '=', quoted: true });
  if (value) segments.push(...wordSegments(value));
  return argFromSegments(segments);
}

function checkSubscriptOf(node: Node, ctx: WalkContext): void {
  const name = node.childForFieldName('name');
  if (name?.type === 'subscript') {
    const index = name.childForFieldName('index');
    if (index) checkArithmeticText(index.text, ctx.acc, ctx.acc.shell, shownText(node.text));
  }
}

/** `[[ … ]]` and `[ … ]`: `[[ a -eq b ]]` evaluates both sides as arithmetic, `-v` evaluates a subscript. */
function visitTest(node: Node, ctx: WalkContext): void {
  const shown = shownText(node.text);
  // `[[ a -eq b ]]` evaluates both sides as arithmetic; the `[`/`test` builtin accepts only numbers there
  const doubleBracket = node.firstChild?.type === '[[';
  const visit = (expression: Node) => {
    if (expression.type === 'binary_expression' || expression.type === 'unary_expression') {
      const operator = expression.namedChildren.find((child) => child?.type === 'test_operator')?.text ?? '';
      const operands = expression.namedChildren.filter(
        (child): child is Node => child !== null && child.type !== 'test_operator',
      );
      if (doubleBracket && /^-(eq|ne|lt|le|gt|ge)$/.test(operator)) {
        for (const operand of operands) {
          if (operand.type === 'binary_expression' || operand.type === 'unary_expression') continue;
          for (const arg of argsOfNode(operand)) {
            if (arg.dynamic) {
              if (!isNumericValue(arg, ctx.acc.shell))
                ctx.acc.opaque(
                  shown,
                  `${arg.display} is evaluated as arithmetic, which can run code: its value is known only at run time`,
                );
            } else checkArithmeticText(arg.value, ctx.acc, ctx.acc.shell, shown);
          }
        }
      } else if (operator === '-v') {
        for (const operand of operands) {
          for (const arg of argsOfNode(operand)) {
            if (arg.dynamic || arg.value.includes('[')) checkAssignedNameSubscript(arg, ctx, shown);
          }
        }
      }
    }
    for (const child of expression.namedChildren) if (child) visit(child);
  };
  for (const child of node.namedChildren) if (child) visit(child);
  if (node.firstChild?.type === '[') {
    // `[` is a builtin (and a program): the rules see it as a command
    const words: Arg[] = [literalArg('[')];
    const flatten = (n: Node) => {
      if (n.type === 'binary_expression' || n.type === 'unary_expression' || n.type === 'parenthesized_expression') {
        for (const child of n.children) if (child) flatten(child);
      } else if (n.isNamed) words.push(...argsOfNode(n));
      else if (n.type !== '(' && n.type !== ')') words.push(literalArg(n.text));
    };
    for (const child of node.children) if (child && child.type !== '[' && child.type !== ']') flatten(child);
    words.push(literalArg(']'));
    ctx.acc.addCommand(words);
  }
  walkChildren(node, ctx);
}

function checkAssignedNameSubscript(arg: Arg, ctx: WalkContext, shown: Arg[]): void {
  if (arg.dynamic) {
    ctx.acc.opaque(shown, `-v ${arg.display} names a variable known only at run time, whose subscript can run code`);
    return;
  }
  const open = arg.value.indexOf('[');
  checkArithmeticText(arg.value.slice(open + 1, arg.value.lastIndexOf(']')), ctx.acc, ctx.acc.shell, shown);
}

const wordNodeTypes = new Set([...argumentNodes, 'command_name', 'regex', 'extglob_pattern']);

/**
 * Word nodes that touch (no blank between them) form one shell word. Returns, for the first node of each such run,
 * the run; for the other nodes of the run, null. Empty when the grammar split nothing.
 */
function gluedWords(children: (Node | null)[]): Map<number, Node[] | null> {
  const out = new Map<number, Node[] | null>();
  let run: Node[] = [];
  const flush = () => {
    if (run.length > 1) {
      out.set((run[0] as Node).id, run);
      for (const node of run.slice(1)) out.set(node.id, null);
    }
    run = [];
  };
  for (const child of children) {
    if (!child || !wordNodeTypes.has(child.type)) {
      flush();
      continue;
    }
    const last = run[run.length - 1];
    if (last && last.endIndex !== child.startIndex) flush();
    run.push(child);
  }
  flush();
  return out;
}

function argsOfNodes(nodes: Node[], prefix?: string): Arg[] {
  const segments = nodes.flatMap((node) => (node.type === 'command_name' ? nameSegments(node) : wordSegments(node)));
  if (prefix) segments.unshift({ lit: prefix, quoted: false });
  const expanded = expandBraces(segments);
  if (!expanded) return [unknownArg(nodes.map((node) => node.text).join(''), true)];
  return braceWords(expanded);
}

/** Brace expansion's words; an empty unquoted one disappears, as in bash (`{,x}` is just `x`). */
function braceWords(expanded: Segment[][]): Arg[] {
  if (expanded.length === 1) return expanded.map(argFromSegments);
  return expanded.filter((segments) => segments.length > 0).map(argFromSegments);
}

function argsOfNode(node: Node, prefix?: string): Arg[] {
  const segments = node.type === 'command_name' ? nameSegments(node) : wordSegments(node);
  if (prefix) segments.unshift({ lit: prefix, quoted: false });
  const expanded = expandBraces(segments);
  if (!expanded) return [unknownArg(node.text, true)];
  return braceWords(expanded);
}

function nameSegments(node: Node) {
  const only = node.namedChildCount === 1 ? node.firstNamedChild : null;
  if (only) return wordSegments(only);
  return node.namedChildren.flatMap((child) => (child ? wordSegments(child) : []));
}

function visitCommand(node: Node, ctx: WalkContext, namePrefix?: string, trailing: Node[] = []): void {
  const args: Arg[] = [];
  let stdin = ctx.stdin;
  const redirects: Node[] = [];
  const children = trailing.length > 0 ? [...node.namedChildren, ...trailing] : node.namedChildren;
  const glued = gluedWords(children);
  for (const child of children) {
    if (!child) continue;
    const group = glued.get(child.id);
    if (group === null) continue;
    if (group) {
      // `"-"\rf`, `'PW'\NED`: the grammar splits one shell word where a quote meets an escape; bash does not
      args.push(...argsOfNodes(group, child.type === 'command_name' ? namePrefix : undefined));
      continue;
    }
    switch (child.type) {
      case 'command_name':
        args.push(...argsOfNode(child, namePrefix));
        break;
      case 'word':
      case 'string':
      case 'raw_string':
      case 'ansi_c_string':
      case 'translated_string':
      case 'concatenation':
      case 'number':
      case 'simple_expansion':
      case 'expansion':
      case 'command_substitution':
      case 'process_substitution':
      case 'arithmetic_expansion':
      case 'brace_expression':
      case 'regex':
      case 'extglob_pattern':
        args.push(...argsOfNode(child));
        break;
      case 'variable_assignment':
        checkAssignment(child, ctx, splittingOnly(children));
        break;
      case 'file_redirect':
      case 'herestring_redirect':
        redirects.push(child);
        break;
      case 'comment':
        break;
      default:
        args.push(unknownArg(child.text, true));
    }
  }
  for (const redirect of redirects) stdin = checkRedirect(redirect, ctx, args) ?? stdin;
  if (args.length > 0) {
    analyzeInvocation(args, ctx.acc, ctx.depth, stdin);
    // dash has no brace expansion and no `$'…'`: when it would run other words, those are judged too
    const posix = /[{]|\$['"]/.test(node.text) ? posixReading(children, namePrefix) : undefined;
    if (posix && !sameWords(posix, args)) analyzeInvocation(posix, ctx.acc, ctx.depth, stdin);
    const split = splitOnIfs(args);
    if (split) analyzeInvocation(split, ctx.acc, ctx.depth, stdin);
    const substituted = substituteKnown(args, ctx.vars);
    if (substituted) analyzeInvocation(substituted, ctx.acc, ctx.depth, stdin);
  }
  // substitutions inside the words run too
  const inner = { ...ctx, stdin: undefined };
  for (const child of children) {
    if (!child || !mayHoldCommands(child)) continue;
    if (child.type === 'variable_assignment' || child.type.endsWith('_redirect')) walkChildren(child, inner);
    else walk(child, inner);
  }
}

/** The words as dash reads them (no brace expansion, `$'…'` is `$` and a quoted string); undefined when plain. */
function posixReading(children: (Node | null)[], namePrefix: string | undefined): Arg[] | undefined {
  if (!children.some((child) => child && /[{]|\$['"]/.test(child.text))) return undefined;
  const out: Arg[] = [];
  const glued = gluedWords(children);
  for (const child of children) {
    if (!child) continue;
    const group = glued.get(child.id);
    if (group === null) continue;
    if (group) {
      const segments = group.flatMap((node) =>
        wordSegments(
          node.type === 'command_name' && node.namedChildCount === 1 && node.firstNamedChild
            ? node.firstNamedChild
            : node,
          true,
        ),
      );
      if (namePrefix && child.type === 'command_name') segments.unshift({ lit: namePrefix, quoted: false });
      out.push(argFromSegments(segments));
      continue;
    }
    if (child.type === 'command_name') {
      const segments = wordSegments(
        child.namedChildCount === 1 && child.firstNamedChild ? child.firstNamedChild : child,
        true,
      );
      if (namePrefix) segments.unshift({ lit: namePrefix, quoted: false });
      out.push(argFromSegments(segments));
    } else if (argumentNodes.has(child.type) || child.type === 'regex' || child.type === 'extglob_pattern') {
      out.push(argFromSegments(wordSegments(child, true)));
    }
  }
  return out;
}

function sameWords(a: readonly Arg[], b: readonly Arg[]): boolean {
  return a.length === b.length && a.every((arg, i) => arg.value === b[i]?.value && arg.display === b[i]?.display);
}

/** `rm${IFS}-rf${IFS}/`: the same words split where an unquoted $IFS stands, as evidence. */
function splitOnIfs(args: Arg[]): Arg[] | undefined {
  if (!args.some((arg) => arg.segments.some((seg) => 'dyn' in seg && !seg.quoted && seg.name === 'IFS'))) return;
  const out: Arg[] = [];
  for (const arg of args) {
    let current: Arg['segments'] = [];
    for (const seg of arg.segments) {
      if ('dyn' in seg && !seg.quoted && seg.name === 'IFS') {
        if (current.length) out.push(argFromSegments(current));
        current = [];
      } else current.push(seg);
    }
    if (current.length) out.push(argFromSegments(current));
  }
  return out;
}

function visitPipeline(node: Node, ctx: WalkContext): void {
  const stages = node.namedChildren.filter((child): child is Node => child !== null && child.type !== 'comment');
  stages.forEach((stage, index) => {
    const stdin: StdinFeed | undefined =
      index === 0 ? ctx.stdin : { known: false, what: 'a pipe', evidence: () => producedText(stages, index - 1) };
    walk(stage, { ...ctx, stdin });
  });
}

/** What a pipeline stage prints, when that is plain: `echo …`, `printf …`, `… | base64 -d`. */
function producedText(stages: Node[], index: number): string | undefined {
  const stage = stages[index];
  if (stage?.type !== 'command') return undefined;
  const args = stage.namedChildren
    .filter((child): child is Node => child !== null && child.type !== 'variable_assignment')
    .flatMap((child) => argsOfNode(child));
  if (args.some((arg) => arg.dynamic)) return undefined;
  const [name, ...rest] = args.map((arg) => arg.value);
  if (name === 'echo') return `${rest.filter((word) => !/^-[neE]+$/.test(word)).join(' ')}\n`;
  if (name === 'printf') return rest.join(' ');
  if (name === 'base64' && rest.some((word) => word === '-d' || word === '--decode' || word === '-D')) {
    const encoded = producedText(stages, index - 1);
    return encoded === undefined ? undefined : decodeBase64Text(encoded);
  }
  return undefined;
}

/** Decodes base64 to text (UTF-8, or UTF-16LE when asked); undefined when it is not base64. */
export function decodeBase64Text(encoded: string, encoding: 'utf-8' | 'utf-16le' = 'utf-8'): string | undefined {
  try {
    const binary = atob(encoded.replace(/\s+/g, ''));
    const bytes = Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
    return new TextDecoder(encoding).decode(bytes);
  } catch {
    return undefined;
  }
}

function visitRedirectedStatement(node: Node, ctx: WalkContext): void {
  let stdin = ctx.stdin;
  const trailing: Node[] = [];
  let body: Node | null = null;
  const bodyId = node.childForFieldName('body')?.id;
  const bodyArgs: Arg[] = [];
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (child.id === bodyId) {
      body = child;
      continue;
    }
    if (child.type === 'heredoc_redirect') {
      stdin = heredocFeed(child);
      for (const part of child.namedChildren) {
        if (!part) continue;
        if (part.type === 'pipeline') {
          // `cat <<EOF | sh`: the grammar hangs the rest of the pipeline under the heredoc
          const heredoc = body?.type === 'command' && body.text === 'cat' && stdin?.known ? stdin.text : undefined;
          const evidence = heredoc === undefined ? undefined : () => heredoc;
          for (const stage of part.namedChildren) {
            if (stage) walk(stage, { ...ctx, stdin: { known: false, what: 'a pipe', evidence } });
          }
        } else if (part.type === 'file_redirect' || part.type === 'herestring_redirect') {
          stdin = checkRedirect(part, ctx, bodyArgs) ?? stdin;
          walkChildren(part, ctx);
        } else if (part.type === 'heredoc_body') {
          // the grammar does not parse backticks (and some `${…}` words) in a body: scan its text instead
          if (!heredocQuoted(child)) handleEmbedded(scanEmbedded(part.text, 'heredoc'), ctx, part.text);
        } else if (argumentNodes.has(part.type) && part.startIndex < operatorLineEnd(child)) {
          // `rm <<EOF -rf /`: words after the here-document operator are arguments of the command
          trailing.push(part);
        } else if (part.type !== 'heredoc_start' && part.type !== 'heredoc_end' && part.type !== 'file_descriptor') {
          walk(part, ctx);
        }
      }
    } else if (child.type === 'file_redirect' || child.type === 'herestring_redirect') {
      stdin = checkRedirect(child, ctx, bodyArgs) ?? stdin;
      walkChildren(child, ctx);
    } else {
      walk(child, ctx);
    }
  }
  if (body && trailing.length > 0) {
    if (body.type === 'command') visitCommand(body, { ...ctx, stdin }, undefined, trailing);
    else {
      ctx.acc.parseProblem('words follow a here-document of something that is not a simple command');
      for (const part of trailing) walk(part, { ...ctx, stdin: undefined });
      walk(body, { ...ctx, stdin });
    }
  } else if (body) walk(body, { ...ctx, stdin });
}

/** Where the line of a here-document operator ends: words after it on that line are arguments. */
function operatorLineEnd(node: Node): number {
  const newline = node.text.indexOf('\n');
  return newline < 0 ? node.endIndex : node.startIndex + newline;
}

function heredocQuoted(node: Node): boolean {
  for (const child of node.children) if (child?.type === 'heredoc_start') return /['"\\]/.test(child.text);
  return false;
}

function heredocFeed(node: Node): StdinFeed {
  let start = '';
  let stripTabs = false;
  let bodyNode: Node | null = null;
  for (const child of node.children) {
    if (!child) continue;
    if (child.type === 'heredoc_start') start = child.text;
    else if (child.type === '<<-') stripTabs = true;
    else if (child.type === 'heredoc_body') bodyNode = child;
  }
  if (!bodyNode) return { known: true, text: '', what: 'a here-document' };
  const quoted = /['"\\]/.test(start);
  let text = bodyNode.text;
  if (!quoted) {
    if (/[$`]/.test(text)) {
      return { known: false, what: 'a here-document with expansions' };
    }
    text = text.replace(/\\([$`\\\n])/g, (_match, ch: string) => (ch === '\n' ? '' : ch));
  }
  if (stripTabs) text = text.replace(/^\t+/gm, '');
  return { known: true, text, what: 'a here-document' };
}

const outputOperators = new Set(['>', '>>', '>|', '&>', '&>>', '>&', '<>']);

/** Checks one redirect; returns what it feeds to standard input, if it does. */
function checkRedirect(node: Node, ctx: WalkContext, args: readonly Arg[]): StdinFeed | undefined {
  if (node.type === 'herestring_redirect') {
    const wordNode = node.namedChildren.find((child) => child && child.type !== 'file_descriptor');
    if (!wordNode) return undefined;
    const arg = argFromSegments(wordSegments(wordNode));
    return arg.dynamic
      ? { known: false, what: 'a here-string with expansions' }
      : { known: true, text: `${arg.value}\n`, what: 'a here-string' };
  }
  checkVariableDescriptor(node, ctx);
  let operator = '';
  for (const child of node.children) if (child && !child.isNamed) operator = child.type;
  const destinationNode = node.childForFieldName('destination');
  if (!destinationNode) return undefined;
  const destination = argFromSegments(wordSegments(destinationNode));
  if (operator === '<') return { known: false, what: `a file (${destination.display})` };
  if (!outputOperators.has(operator)) return undefined;
  if ((operator === '>&' || operator === '<>') && /^(\d+|-)$/.test(destination.value) && !destination.dynamic) return;
  if (!destination.dynamic && isHarmlessDevice(destination.value)) return undefined;
  const target = [literalArg('>'), destination];
  if (isDiskDevice(destination.value) || (destination.dynamic && isDiskDevice(destination.value))) {
    ctx.acc.catastrophic([...args, ...target], `writes to the device ${destination.display}`);
  }
  // Writing a file is a side effect of its own: rules see it as the command `> PATH`.
  ctx.acc.addCommand(target);
  return undefined;
}

/** `exec {NAME}>file` assigns the new descriptor's number to NAME (`{PATH}>x` sets PATH=10). */
function checkVariableDescriptor(redirect: Node, ctx: WalkContext): void {
  let candidate: Node | null = redirect.previousSibling;
  while (candidate && candidate.endIndex === redirect.startIndex) {
    const match = /\{([^{}]*)\}$/.exec(candidate.text);
    if (match) {
      const name = match[1] as string;
      const concern = assignmentConcern(name);
      if (concern) ctx.acc.opaque(shownText(`{${name}}${redirect.text}`), concern.message, concern.verdict);
      ctx.acc.shell.numeric.add(name);
      return;
    }
    candidate = candidate.lastChild;
  }
}

/** `IFS=: read -r a b`: IFS set for `read` or `mapfile` alone only changes how their input is split. */
function splittingOnly(children: (Node | null)[]): boolean {
  const name = children.find((child) => child?.type === 'command_name')?.text;
  return name === 'read' || name === 'mapfile' || name === 'readarray';
}

function checkAssignment(node: Node, ctx: WalkContext, splitting = false): void {
  const name = node.childForFieldName('name');
  const variable = name?.type === 'subscript' ? name.childForFieldName('name')?.text : name?.text;
  if (variable && !(splitting && variable === 'IFS')) {
    const concern = assignmentConcern(variable);
    if (concern) ctx.acc.opaque([unknownArg(node.text, false)], concern.message, concern.verdict);
    if (ctx.acc.shell.integers.has(variable)) {
      // `declare -i n; n=$x`: the value is evaluated as arithmetic
      const value = node.childForFieldName('value');
      const arg = value ? argFromSegments(wordSegments(value)) : undefined;
      if (arg && !isNumericValue(arg, ctx.acc.shell)) {
        if (arg.dynamic)
          ctx.acc.opaque(
            [unknownArg(node.text, false)],
            `${variable} is an integer variable: the value ${arg.display} is evaluated as arithmetic, which can run code`,
          );
        else checkArithmeticText(arg.value, ctx.acc, ctx.acc.shell, [unknownArg(node.text, false)]);
      }
    }
  }
  if (name?.type === 'subscript') {
    checkQuotedArithmetic(name, ctx, node.text);
    checkSubscriptOf(node, ctx);
  }
}

/** Array subscripts and arithmetic evaluate `$(…)` even inside quotes: `let 'a[$(id)]'`, `(( x['$(id)'] ))`. */
function checkQuotedArithmetic(node: Node, ctx: WalkContext, display: string): void {
  if (node.type === 'raw_string' || node.type === 'string' || node.type === 'word' || node.type === 'concatenation') {
    const value = argFromSegments(wordSegments(node)).value;
    if (/\$\(|`/.test(value) && /\[/.test(value)) {
      ctx.acc.opaque([unknownArg(display, false)], 'quoted text reaches arithmetic evaluation, which runs $(…) in it');
    }
    return;
  }
  for (const child of node.namedChildren) {
    if (child && (child.type === 'raw_string' || child.type === 'string' || child.type === 'word')) {
      const value = argFromSegments(wordSegments(child)).value;
      if (/\$\(|`/.test(value)) {
        ctx.acc.opaque(
          [unknownArg(display, false)],
          'quoted text reaches arithmetic evaluation, which runs $(…) in it',
        );
        return;
      }
    }
  }
}

function visitFunction(node: Node, ctx: WalkContext): void {
  const name = node.childForFieldName('name')?.text;
  const body = node.childForFieldName('body');
  if (name) ctx.acc.shell.functions.add(name);
  if (name && body) {
    let selfCalls = 0;
    let background = false;
    const scan = (n: Node) => {
      if (n.type === 'command' && n.childForFieldName('name')?.text === name) selfCalls++;
      if (n.type === '&' || n.type === '|') background = true;
      for (const child of n.children) if (child) scan(child);
    };
    scan(body);
    if (selfCalls >= 2 || (selfCalls >= 1 && background)) {
      ctx.acc.catastrophic([literalArg(name)], `the function ${name} calls itself in the background: a fork bomb`);
    }
  }
  if (!body) return;
  // the body runs when the function is called, not where it is written: nothing is known about numbers there,
  // and what it assigns is not known afterwards either
  const state = ctx.acc.shell;
  const known = state.numeric;
  state.numeric = known.fresh();
  try {
    walk(body, ctx);
  } finally {
    state.numeric = known;
  }
  forgetLoopAssignments(body, ctx);
}

export { words };

function rememberAssignment(node: Node, ctx: WalkContext): void {
  const name = node.childForFieldName('name');
  const value = node.childForFieldName('value');
  if (name?.type !== 'variable_name') return;
  const arg = value ? argFromSegments(wordSegments(value)) : undefined;
  const append = node.children.some((child) => child?.type === '+=');
  if (isNumericValue(arg, ctx.acc.shell) && (!append || ctx.acc.shell.numeric.has(name.text)))
    ctx.acc.shell.numeric.add(name.text);
  else ctx.acc.shell.numeric.delete(name.text);
  if (!arg || arg.dynamic || append) ctx.vars.delete(name.text);
  else ctx.vars.set(name.text, arg.value);
}

/** The words with variables set earlier to a literal filled in; undefined when there are none. */
function substituteKnown(args: Arg[], vars: Map<string, string>): Arg[] | undefined {
  if (vars.size === 0) return undefined;
  let changed = false;
  const out: Arg[] = [];
  for (const arg of args) {
    if (!arg.segments.some((seg) => 'dyn' in seg && seg.name !== undefined && vars.has(seg.name))) {
      out.push(arg);
      continue;
    }
    changed = true;
    let current: Segment[] = [];
    for (const seg of arg.segments) {
      const known = 'dyn' in seg && seg.name !== undefined ? vars.get(seg.name) : undefined;
      if (known === undefined) {
        current.push(seg);
      } else if (seg.quoted) {
        current.push({ lit: known, quoted: true });
      } else {
        // unquoted: split into words like the shell would
        const pieces = known.split(/[ \t\n]+/);
        pieces.forEach((piece, index) => {
          if (index > 0) {
            if (current.length) out.push(argFromSegments(current));
            current = [];
          }
          if (piece) current.push({ lit: piece, quoted: true });
        });
      }
    }
    if (current.length) out.push(argFromSegments(current));
  }
  return changed ? out : undefined;
}

/**
 * Error recovery. tree-sitter-bash reads `{rm,-rf,/}` as a broken brace group; bash reads it as one word that
 * brace-expands to `rm -rf /`. Rebuild that word so the evidence is not lost (the parse error keeps it opaque).
 */
function visitError(node: Node, ctx: WalkContext): void {
  const children = node.children;
  for (let i = 0; i < children.length; i++) {
    const child = children[i];
    if (!child) continue;
    const next = children[i + 1];
    if (child.type === '{' && next && next.startIndex === child.endIndex) {
      if (next.type === 'command_name') {
        const args = argsOfNode(next, '{');
        analyzeInvocation(args, ctx.acc, ctx.depth, ctx.stdin);
        i++;
        continue;
      }
      if (next.type === 'command') {
        visitCommand(next, ctx, '{');
        i++;
        continue;
      }
    }
    if (child.isNamed) walk(child, ctx);
  }
}
