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
  strictestVerdict,
  type Verdict,
} from '@letkite/command-rules';
import { parse as parseToml, TomlError } from 'smol-toml';
import { EXIT_OK, EXIT_USAGE } from '../io';

const USAGE = 'usage: letkite rules check --policy FILE [--confirm] [--jsonl] [--exit-code] [-- COMMAND]';

/** `--exit-code`: the exit status is the strictest verdict. */
export const verdictExitCodes = { allow: 0, confirm: 1, approve: 2, deny: 3 } as const;
/**
 * With `--exit-code`, a usage or policy-file error exits with this code (sysexits' EX_USAGE), so a script can never
 * read it as a verdict; without the flag such errors keep the CLI's usual usage code (2).
 */
export const EXIT_USAGE_WITH_VERDICTS = 64;

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
 * `letkite rules check --policy FILE [--confirm] [--jsonl] [--exit-code] [-- COMMAND]`: judges commands with the
 * `[commands]` table of a policy file (DESIGN §4, §11; TOML or JSON, by extension or else by content; other policy
 * keys are ignored here). With `-- COMMAND` it judges that one command (the words after `--`, joined by spaces)
 * and prints one JSON line; otherwise it reads one command per line from stdin (blank lines skipped) and writes
 * one JSON object per line: `{"command", "verdict", "reasons"}`. With `--jsonl` every stdin line is one JSON
 * string, so a command can contain newlines (`"cat <<EOF\nhi\nEOF"`); a line that is not a JSON string is a
 * usage error naming its line. A bad policy file is an error naming its line. Exit code 0, or with `--exit-code`
 * the strictest verdict judged (0 allow, 1 confirm, 2 approve, 3 deny); usage errors exit 2, or 64 with
 * `--exit-code`.
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
  let jsonl: boolean;
  // known before parsing, so that even a bad option gets the code a script expects
  const exitCode = optionArgs.includes('--exit-code');
  const usageCode = exitCode ? EXIT_USAGE_WITH_VERDICTS : EXIT_USAGE;
  try {
    const { values } = parseArgs({
      args: optionArgs,
      options: {
        policy: { type: 'string' },
        confirm: { type: 'boolean', default: false },
        jsonl: { type: 'boolean', default: false },
        'exit-code': { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
    if (!values.policy) throw new Error('--policy FILE is required');
    if (commandWords?.length === 0) throw new Error('no command after --');
    if (commandWords && values.jsonl) throw new Error('--jsonl reads commands from stdin: do not give one after --');
    policyPath = values.policy;
    confirm = values.confirm;
    jsonl = values.jsonl;
  } catch (err) {
    io.stderr.write(`letkite rules check: ${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    return usageCode;
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
    return usageCode;
  }

  let strictest: Verdict = 'allow';
  const judge = (command: string) => {
    const { verdict, reasons } = evaluateCommand(command, policy, { confirm });
    strictest = strictestVerdict(strictest, verdict);
    io.stdout.write(`${JSON.stringify({ command, verdict, reasons })}\n`);
  };
  const done = () => (exitCode ? verdictExitCodes[strictest] : EXIT_OK);
  if (commandWords) {
    judge(commandWords.join(' '));
    return done();
  }
  const lines = createInterface({ input: io.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  let lineNumber = 0;
  for await (const line of lines) {
    lineNumber++;
    if (line.trim() === '') continue;
    if (!jsonl) {
      judge(line);
      continue;
    }
    let command: unknown;
    try {
      command = JSON.parse(line);
    } catch {
      command = undefined;
    }
    if (typeof command !== 'string') {
      io.stderr.write(`letkite rules check: stdin line ${lineNumber}: with --jsonl each line must be a JSON string\n`);
      lines.close();
      return usageCode;
    }
    judge(command);
  }
  return done();
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
