import { allowlistArgs } from './allowlist';
import { Analysis, type CommandRecord, words } from './analysis';
import { builtinFindings, lineFindings } from './builtin-layers';
import { candidateRules, compileCeilingRules, compilePolicy, type RuleIndex } from './compiled-policy';
import { judgeEnvironment } from './environment';
import { analyzeInvocation } from './invocation';
import { defaultTrustedDirs, evidenceName, normalizeAbsolutePath } from './paths';
import { type CompiledPattern, certainMatch, type MatchContext, matchPattern, maybeMatch } from './pattern';
import type { CommandPolicy, Verdict } from './policy-schema';
import type { EvaluateOptions, Evaluation, Reason } from './types';
import { strictestVerdict } from './verdict';
import { analyzeShellText } from './walk';
import { literalArg } from './words';

const defaultTrustedSet: ReadonlySet<string> = new Set(defaultTrustedDirs);

/**
 * Decides `allow | confirm | approve | deny` for a command (DESIGN §4). A string is a shell command line (in
 * allowlist mode: one plain command); a string array is an argv run without a shell. Synchronous: call
 * `await loadCommandRules()` once before the first call. Never throws for any command text; a policy whose
 * patterns do not compile is a deny.
 */
export function evaluateCommand(
  command: string | string[],
  commandPolicy: CommandPolicy,
  options: EvaluateOptions = {},
): Evaluation {
  const trustedDirs = options.trustedDirs
    ? new Set(options.trustedDirs.map((dir) => normalizeAbsolutePath(dir)))
    : defaultTrustedSet;
  let policy: ReturnType<typeof compilePolicy>;
  let ceiling: RuleIndex | undefined;
  try {
    policy = compilePolicy(commandPolicy);
    ceiling = options.ceilingRules?.length ? compileCeilingRules(options.ceilingRules) : undefined;
  } catch (error) {
    return {
      verdict: 'deny',
      reasons: [
        {
          command: [],
          layer: 'rule',
          verdict: 'deny',
          message: `the policy cannot be used: ${(error as Error).message}`,
        },
      ],
    };
  }
  const acc = new Analysis();
  const reasons: Reason[] = [];
  const isArgv = Array.isArray(command);
  if (isArgv ? !command.every((word) => typeof word === 'string') : typeof command !== 'string') {
    return finish(
      [{ command: [], layer: 'parse', verdict: 'deny', message: 'the command is neither text nor an argv' }],
      options,
    );
  }
  if (options.env) reasons.push(...environmentReasons(options.env, commandPolicy.mode === 'allowlist'));
  if (commandPolicy.mode === 'allowlist') {
    const input = isArgv ? { ok: true as const, args: command.map(literalArg) } : allowlistArgs(command);
    if (!input.ok)
      return finish([{ command: [], layer: 'allowlist', verdict: 'deny', message: input.message }], options);
    if (input.args.length === 0) return finish([emptyReason()], options);
    reasons.push(allowlistReason(input.args, policy.allow, trustedDirs));
    analyzeInvocation(input.args, acc, 0, undefined);
  } else if (isArgv) {
    if (command.length === 0) return finish([emptyReason()], options);
    analyzeInvocation(command.map(literalArg), acc, 0, undefined);
  } else {
    analyzeShellText(command, acc, 0);
  }
  if (acc.commands.length === 0 && acc.findings.length === 0) return finish([emptyReason()], options);
  reasons.push(...acc.findings);
  reasons.push(...lineFindings(acc.commands));
  const proofNeeded: MatchContext = { needsProof: true, trustedDirs };
  const evidenceNeeded: MatchContext = { needsProof: false, trustedDirs };
  for (const record of acc.commands) {
    const command = words(record.args);
    for (const finding of builtinFindings(record.args)) reasons.push({ command, ...finding });
    if (commandPolicy.mode !== 'allowlist') {
      ruleReasons(
        reasons,
        command,
        record,
        policy.rules,
        record.transparent ? undefined : (commandPolicy.default ?? 'approve'),
        proofNeeded,
        evidenceNeeded,
      );
    }
    if (ceiling) ruleReasons(reasons, command, record, ceiling, undefined, proofNeeded, evidenceNeeded);
  }
  return finish(reasons, options);
}

/**
 * The `env` argument, judged like assignments written before the command. Allowlist mode runs one listed program
 * as it is: a variable that changes what runs or what it reads is refused there, by the allowlist layer.
 */
function environmentReasons(env: Record<string, string>, allowlist: boolean): Reason[] {
  return judgeEnvironment(env).map((reason) =>
    allowlist && reason.verdict !== 'deny'
      ? {
          ...reason,
          layer: 'allowlist',
          verdict: 'deny',
          message: `allowlist mode runs listed programs with the machine's own environment; ${reason.message}`,
        }
      : reason,
  );
}

function emptyReason(): Reason {
  return { command: [], layer: 'parse', verdict: 'deny', message: 'there is no command to run' };
}

function finish(reasons: Reason[], options: EvaluateOptions): Evaluation {
  let verdict = strictestVerdict(...reasons.map((reason) => reason.verdict));
  if (verdict === 'confirm' && options.confirm) verdict = 'allow';
  return { verdict, reasons };
}

/** First certain match wins; rules that may match (unknown words) before it add their verdicts too. */
function ruleReasons(
  out: Reason[],
  command: string[],
  record: CommandRecord,
  index: RuleIndex,
  fallback: Verdict | undefined,
  proofNeeded: MatchContext,
  evidenceNeeded: MatchContext,
): void {
  const name = record.args[0];
  const rules = candidateRules(index, name && !name.dynamic && !name.glob ? evidenceName(name.value) : undefined);
  for (const rule of rules) {
    const result = matchPattern(rule.pattern, record.args, rule.verdict === 'allow' ? proofNeeded : evidenceNeeded);
    if (result === certainMatch) {
      out.push({
        command,
        layer: rule.layer,
        rule: rule.label,
        verdict: rule.verdict,
        message: `matches ${rule.label}`,
      });
      return;
    }
    if (result === maybeMatch && rule.verdict !== 'allow') {
      out.push({
        command,
        layer: rule.layer,
        rule: rule.label,
        verdict: rule.verdict,
        message: `may match ${rule.label}: parts of the command are known only at run time`,
      });
    }
  }
  if (fallback !== undefined) {
    out.push({
      command,
      layer: 'default',
      verdict: fallback,
      message: `no rule matches; the policy's default is ${fallback}`,
    });
  }
}

function allowlistReason(
  args: CommandRecord['args'],
  allow: CompiledPattern[],
  trustedDirs: ReadonlySet<string>,
): Reason {
  const command = words(args);
  const ctx: MatchContext = { needsProof: true, trustedDirs };
  const entry = allow.find((pattern) => matchPattern(pattern, args, ctx) === certainMatch);
  if (entry)
    return { command, layer: 'allowlist', rule: entry.source, verdict: 'allow', message: `listed as ${entry.source}` };
  return {
    command,
    layer: 'allowlist',
    verdict: 'deny',
    message: 'the program and its arguments are not on the allowlist',
  };
}
