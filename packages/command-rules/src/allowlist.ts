import type { Node } from './shell-parser';
import { parseShellText } from './shell-parser';
import type { Arg } from './types';
import { argFromSegments, wordSegments } from './words';

const plainWordTypes = new Set(['word', 'raw_string', 'string', 'number', 'concatenation', 'ansi_c_string']);

export type AllowlistInput = { ok: true; args: Arg[] } | { ok: false; message: string };

/**
 * Allowlist mode runs one program with execve and no shell, so the text must be exactly one plain command:
 * words, quotes and backslashes only. Anything a shell would do (expansions, globs, braces, `~`, redirects,
 * pipes, lists, assignments, comments) is refused rather than guessed at.
 */
export function allowlistArgs(command: string): AllowlistInput {
  const parsed = parseShellText(command);
  if (!parsed.ok) return { ok: false, message: parsed.message };
  try {
    const root = parsed.tree.rootNode;
    if (root.hasError) return { ok: false, message: 'the command does not parse' };
    const statement = root.namedChild(0);
    if (root.childCount !== 1 || !statement || statement.type !== 'command') {
      return refusal(root.childCount === 0 ? 'there is no command' : `found ${describe(statement, root)}`);
    }
    const args: Arg[] = [];
    for (const child of statement.namedChildren) {
      if (!child) continue;
      const word = child.type === 'command_name' ? child.namedChild(0) : child;
      if (!word || !isPlain(word) || (child.type === 'command_name' && child.namedChildCount !== 1)) {
        return refusal(`found ${describe(word ?? child, root)}`);
      }
      const arg = argFromSegments(wordSegments(word));
      const unquoted = arg.segments.map((seg) => ('lit' in seg && !seg.quoted ? seg.lit : '')).join('');
      if (/[*?[\]{}]/.test(unquoted))
        return refusal(`the word ${JSON.stringify(word.text)} would be a glob or brace expansion`);
      if (unquoted.startsWith('~') && arg.segments[0] && 'lit' in arg.segments[0] && !arg.segments[0].quoted) {
        return refusal(`the word ${JSON.stringify(word.text)} would be a tilde expansion`);
      }
      args.push(arg);
    }
    return { ok: true, args };
  } finally {
    parsed.tree.delete();
  }
}

function refusal(detail: string): AllowlistInput {
  return { ok: false, message: `allowlist mode runs one plain command without a shell; ${detail}` };
}

function isPlain(node: Node): boolean {
  if (!plainWordTypes.has(node.type)) return false;
  if (node.type === 'string') return node.namedChildren.every((child) => child?.type === 'string_content');
  if (node.type === 'concatenation') return node.namedChildren.every((child) => child !== null && isPlain(child));
  return true;
}

function describe(node: Node | null, root: Node): string {
  if (!node) return 'no command';
  const names: Record<string, string> = {
    pipeline: 'a pipeline',
    list: 'a command list (&&, ||)',
    redirected_statement: 'a redirection',
    variable_assignment: 'a variable assignment',
    subshell: 'a subshell',
    command_substitution: 'a command substitution',
    process_substitution: 'a process substitution',
    simple_expansion: 'a variable expansion',
    expansion: 'a variable expansion',
    arithmetic_expansion: 'an arithmetic expansion',
    function_definition: 'a function definition',
    comment: 'a comment',
    file_redirect: 'a redirection',
    herestring_redirect: 'a here-string',
  };
  const text = node.text.length > 40 ? `${node.text.slice(0, 40)}…` : node.text;
  if (root.namedChildCount > 1 || root.childCount > 1)
    return `shell syntax joining several commands (${JSON.stringify(root.text.slice(0, 40))})`;
  return `${names[node.type] ?? `shell syntax (${node.type})`}: ${JSON.stringify(text)}`;
}
