import {
  type Reason as EvaluationReason,
  evaluateCommand,
  judgeStdin,
  strictestVerdict,
  type Verdict,
} from '@letkite/command-rules';
import { type ErrorCode, LetKiteError } from '@letkite/protocol';
import type { Ceiling } from './ceiling-schema';
import type { ClampedPolicy } from './clamp-to-ceiling';

export interface CommandJudgement {
  verdict: Verdict;
  reasons: EvaluationReason[];
  /** Which layer decided a refusal: the machine's ceiling, or the policy (rules, defaults, built-in layers). */
  layer: 'ceiling' | 'policy';
}

/**
 * Judges one command against a clamped policy: the shell level, the command mode and every rule layer (the
 * policy's rules and rule sets, the ceiling's rules, the built-in layers). Shared by the gateway and the agent so
 * both check a call the same way (DESIGN §3). `confirm: true` lifts a `confirm` verdict only. `env` is the
 * call's environment, judged like `NAME=value` written before the command (allowlist mode refuses what matters).
 * `stdin` is the text the call writes to the command's standard input: a shell found in the line runs it as a
 * script, so it is judged as a command line of its own; an interpreter reading it makes the call opaque.
 */
export function judgeCommand(
  clamped: ClampedPolicy,
  ceiling: Ceiling | null,
  command: string | string[],
  options: { confirm?: boolean; env?: Record<string, string> | undefined; stdin?: string | undefined } = {},
): CommandJudgement {
  if (clamped.shell === 'off') {
    const byCeiling = ceiling?.shell === 'off';
    return {
      verdict: 'deny',
      layer: byCeiling ? 'ceiling' : 'policy',
      reasons: [
        {
          command: typeof command === 'string' ? [command] : command,
          layer: byCeiling ? 'ceiling' : 'rule',
          verdict: 'deny',
          message: byCeiling
            ? 'this machine\'s ceiling turns commands off (shell = "off")'
            : 'the policy turns commands off (shell = "off")',
        },
      ],
    };
  }
  const evaluation = evaluateCommand(command, clamped.commands, {
    confirm: options.confirm ?? false,
    ceilingRules: clamped.rule_layers.flat(),
    ...(options.env ? { env: options.env } : {}),
  });
  const fromStdin = judgeStdin(evaluation.reasons, options.stdin, clamped.commands.mode, (script) => {
    // The script runs in the shell the call started, with the call's environment, under the same rules.
    const judged = judgeCommand(clamped, ceiling, script, { confirm: options.confirm ?? false });
    return judged.reasons;
  });
  if (fromStdin.length > 0) {
    evaluation.reasons.push(...fromStdin);
    evaluation.verdict = strictestVerdict(evaluation.verdict, ...fromStdin.map((r) => r.verdict));
  }
  if (clamped.ceiling_allow !== null) {
    // The ceiling's own allowlist is a second, independent gate: the policy's list can only narrow it.
    const own = ceilingAllowlistReasons(command, clamped.ceiling_allow, options);
    evaluation.reasons.push(...own);
    evaluation.verdict = strictestVerdict(evaluation.verdict, ...own.map((r) => r.verdict));
  }
  const deciding = evaluation.reasons.filter((r) => r.verdict === evaluation.verdict);
  const ceilingForcedAllowlist = ceiling?.commands_mode === 'allowlist';
  const byCeiling =
    deciding.some((r) => r.layer === 'ceiling') ||
    (ceilingForcedAllowlist && deciding.some((r) => r.layer === 'allowlist' || r.layer === 'parse'));
  return { verdict: evaluation.verdict, reasons: evaluation.reasons, layer: byCeiling ? 'ceiling' : 'policy' };
}

/** The ceiling allowlist's verdict on a command, as reasons of the `ceiling` layer. */
function ceilingAllowlistReasons(
  command: string | string[],
  allow: readonly string[],
  options: { confirm?: boolean; env?: Record<string, string> | undefined },
): EvaluationReason[] {
  if (allow.length === 0) {
    return [
      {
        command: typeof command === 'string' ? [command] : command,
        layer: 'ceiling',
        verdict: 'deny',
        message:
          'this machine\'s ceiling forces allowlist mode (commands_mode = "allowlist") and its allow list is empty, so no command runs here',
      },
    ];
  }
  const own = evaluateCommand(
    command,
    { mode: 'allowlist', rulesets: [], default: 'deny', rules: [], allow: [...allow] },
    { confirm: options.confirm ?? false, ...(options.env ? { env: options.env } : {}) },
  );
  return own.reasons
    .filter((r) => r.layer === 'allowlist' || r.layer === 'parse')
    .map((r) => ({
      ...r,
      layer: 'ceiling' as const,
      message:
        r.verdict === 'allow'
          ? `this machine's ceiling allowlist: ${r.message}`
          : `this machine's ceiling allowlist refuses it: ${r.message}`,
    }));
}

/**
 * The refusal a judgement means for a call that has no human approval (or `undefined` when it may run):
 * `deny` → blocked_by_policy|ceiling, `confirm` → confirmation_required, `approve` → blocked (the gateway turns
 * that into an approval request before it gets here).
 */
export function commandRefusal(j: CommandJudgement, approved: boolean): LetKiteError | undefined {
  if (j.verdict === 'allow' || (j.verdict === 'approve' && approved)) return undefined;
  const why = j.reasons
    .filter((r) => r.verdict === j.verdict)
    .map((r) => r.message)
    .join('; ');
  const details = { verdict: j.verdict, layer: j.layer, reasons: j.reasons };
  if (j.verdict === 'confirm') {
    return new LetKiteError(
      'confirmation_required',
      `show the person the exact command and resend with confirm: true (${why})`,
      details,
    );
  }
  const code: ErrorCode = j.layer === 'ceiling' ? 'blocked_by_ceiling' : 'blocked_by_policy';
  return new LetKiteError(
    code,
    j.verdict === 'approve' ? `this command needs a human approval first (${why})` : `command refused: ${why}`,
    details,
  );
}
