import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import {
  type CommandPolicy,
  CommandPolicyError,
  evaluateCommand,
  loadCommandRules,
  parseCommandPolicy,
  RulesetError,
} from '@letkite/command-rules';
import { parse as parseToml, TomlError } from 'smol-toml';
import { EXIT_OK, EXIT_USAGE } from '../io';

const USAGE = 'usage: letkite rules check --policy FILE [--confirm] [-- COMMAND]';

/** A policy file that cannot be used, with the line to look at when there is one. */
class PolicyFileError extends Error {
  constructor(
    message: string,
    readonly line?: number,
  ) {
    super(message);
  }
}

/**
 * `letkite rules check --policy FILE [--confirm] [-- COMMAND]`: judges commands with the `[commands]` table of a
 * policy file (DESIGN §4; TOML or JSON, by extension or else by content; other policy keys are ignored here).
 * With `-- COMMAND` it judges that one command (the words after `--`, joined by spaces) and prints one JSON
 * line; otherwise it reads one command per line from stdin (blank lines skipped) and writes one JSON object per
 * line: `{"command", "verdict", "reasons"}`. A bad policy file is an error naming its line, exit code 2.
 */
export async function rulesCheck(
  args: string[],
  io: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream },
): Promise<number> {
  const separator = args.indexOf('--');
  const optionArgs = separator < 0 ? args : args.slice(0, separator);
  const commandWords = separator < 0 ? undefined : args.slice(separator + 1);
  let policyPath: string;
  let confirm: boolean;
  try {
    const { values } = parseArgs({
      args: optionArgs,
      options: { policy: { type: 'string' }, confirm: { type: 'boolean', default: false } },
      strict: true,
      allowPositionals: false,
    });
    if (!values.policy) throw new Error('--policy FILE is required');
    if (commandWords?.length === 0) throw new Error('no command after --');
    policyPath = values.policy;
    confirm = values.confirm;
  } catch (err) {
    io.stderr.write(`letkite rules check: ${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    return EXIT_USAGE;
  }

  let policy: CommandPolicy;
  try {
    policy = await readCommandPolicy(policyPath);
    await loadCommandRules();
  } catch (err) {
    const where = err instanceof PolicyFileError && err.line !== undefined ? `:${err.line}` : '';
    io.stderr.write(
      `letkite rules check: ${policyPath}${where}: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    return EXIT_USAGE;
  }

  const judge = (command: string) => {
    const { verdict, reasons } = evaluateCommand(command, policy, { confirm });
    io.stdout.write(`${JSON.stringify({ command, verdict, reasons })}\n`);
  };
  if (commandWords) {
    judge(commandWords.join(' '));
    return EXIT_OK;
  }
  const lines = createInterface({ input: io.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    if (line.trim() !== '') judge(line);
  }
  return EXIT_OK;
}

/** Reads a policy file and returns its validated `[commands]` table. */
export async function readCommandPolicy(path: string): Promise<CommandPolicy> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new PolicyFileError(`cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const json = /\.json$/i.test(path) || (!/\.toml$/i.test(path) && text.trimStart().startsWith('{'));
  const document = json ? parseJson(text) : parseTomlText(text);
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new PolicyFileError('a policy must be a table (an object)', 1);
  }
  const commands = (document as Record<string, unknown>).commands;
  try {
    return parseCommandPolicy(commands ?? {});
  } catch (err) {
    if (err instanceof CommandPolicyError) {
      const first = err.issues[0];
      const line = first ? locate(text, first.path, commands) : undefined;
      throw new PolicyFileError(
        `invalid [commands] table: ${err.issues.map((issue) => `commands.${issue.path}: ${issue.message}`).join('; ')}`,
        line,
      );
    }
    if (err instanceof RulesetError) throw new PolicyFileError(err.message);
    throw err;
  }
}

function parseTomlText(text: string): unknown {
  try {
    return parseToml(text);
  } catch (err) {
    if (err instanceof TomlError) throw new PolicyFileError(`invalid TOML: ${err.message.split('\n')[0]}`, err.line);
    throw err;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const lineMatch = /line (\d+)/.exec(message);
    const position = /position (\d+)/.exec(message);
    const line = lineMatch
      ? Number(lineMatch[1])
      : position
        ? text.slice(0, Number(position[1])).split('\n').length
        : undefined;
    throw new PolicyFileError(`invalid JSON: ${message}`, line);
  }
}

/** The line of a schema issue: where its bad value, or else its key, or else the commands table, is written. */
function locate(text: string, path: string, commands: unknown): number | undefined {
  const lines = text.split('\n');
  const keys = path.split('.').filter(Boolean);
  let value: unknown = commands;
  for (const key of keys)
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  const header = lines.findIndex((line) => /^\s*\[commands\]|"commands"\s*:/.test(line));
  const after = (test: (line: string) => boolean) => {
    const index = lines.findIndex((line, i) => i >= Math.max(header, 0) && test(line));
    return index < 0 ? undefined : index + 1;
  };
  if (typeof value === 'string' && value !== '') {
    const found = after((line) => line.includes(value as string));
    if (found) return found;
  }
  const key = [...keys].reverse().find((part) => !/^\d+$/.test(part));
  if (key) {
    const found = after((line) => new RegExp(`(^|[\\s{,"])${key}"?\\s*[=:]`).test(line));
    if (found) return found;
  }
  return header < 0 ? undefined : header + 1;
}
