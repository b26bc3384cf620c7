import { type Analysis, maxNestingDepth, type StdinFeed, words } from './analysis';
import { analyzeInvocation, isRuntimeVariable } from './invocation';
import { isDiskDevice, isHarmlessDevice } from './paths';
import { type Node, parseShellText } from './shell-parser';
import type { Arg, Segment } from './types';
import { argFromSegments, expandBraces, literalArg, unknownArg, wordSegments } from './words';

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
  const parsed = parseShellText(text);
  if (!parsed.ok) {
    acc.parseProblem(parsed.message);
    return;
  }
  try {
    const root = parsed.tree.rootNode;
    if (root.hasError) acc.parseProblem('the command does not parse as shell syntax');
    walk(root, { acc, depth, stdin, vars: new Map() });
  } finally {
    parsed.tree.delete();
  }
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
    case 'unset_command':
      for (const child of node.namedChildren) {
        if (!child) continue;
        if (child.type === 'variable_assignment') checkAssignment(child, ctx);
        else checkArithmeticText(child, ctx, node.text);
      }
      walkChildren(node, ctx);
      return;
    case 'test_command':
    case 'compound_statement':
    case 'arithmetic_expansion':
    case 'subscript':
      checkArithmeticText(node, ctx, node.text);
      walkChildren(node, ctx);
      return;
    case 'command_substitution':
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

function argsOfNode(node: Node, prefix?: string): Arg[] {
  const segments = node.type === 'command_name' ? nameSegments(node) : wordSegments(node);
  if (prefix) segments.unshift({ lit: prefix, quoted: false });
  const expanded = expandBraces(segments);
  if (!expanded) return [unknownArg(node.text, true)];
  return expanded.map(argFromSegments);
}

function nameSegments(node: Node) {
  const only = node.namedChildCount === 1 ? node.firstNamedChild : null;
  if (only) return wordSegments(only);
  return node.namedChildren.flatMap((child) => (child ? wordSegments(child) : []));
}

function visitCommand(node: Node, ctx: WalkContext, namePrefix?: string): void {
  const args: Arg[] = [];
  let stdin = ctx.stdin;
  const redirects: Node[] = [];
  const children = node.namedChildren;
  for (const child of children) {
    if (!child) continue;
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
        checkAssignment(child, ctx);
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
          walkChildren(part, { ...ctx, stdin: undefined });
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
  if (body) walk(body, { ...ctx, stdin });
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
    if (bodyNode.namedChildren.some((child) => child && child.type !== 'heredoc_content')) {
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

function checkAssignment(node: Node, ctx: WalkContext): void {
  const name = node.childForFieldName('name');
  const variable = name?.type === 'subscript' ? name.childForFieldName('name')?.text : name?.text;
  if (variable && isRuntimeVariable(variable)) {
    ctx.acc.opaque([unknownArg(node.text, false)], `setting ${variable} changes which program or code runs`);
  }
  if (name?.type === 'subscript') checkArithmeticText(name, ctx, node.text);
}

/** Array subscripts and arithmetic evaluate `$(…)` even inside quotes: `let 'a[$(id)]'`, `(( x['$(id)'] ))`. */
function checkArithmeticText(node: Node, ctx: WalkContext, display: string): void {
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
  if (body) walk(body, ctx);
}

export { words };

function rememberAssignment(node: Node, ctx: WalkContext): void {
  const name = node.childForFieldName('name');
  const value = node.childForFieldName('value');
  if (name?.type !== 'variable_name') return;
  const arg = value ? argFromSegments(wordSegments(value)) : undefined;
  if (!arg || arg.dynamic) ctx.vars.delete(name.text);
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
