import type { CommandJudgement } from '@letkite/ceiling';
import { execMany, LetKiteError, toLetKiteError } from '@letkite/protocol';
import type { z } from 'zod';
import type { ApprovalReason } from '../../approvals/approval-store';
import { commandRuleReason, machineSetTarget, policyToolReason, requireApproval } from '../../approvals/gate';
import { type JudgedCommand, judgeCommandOn } from '../../commands/judge-and-gate';
import { runCommand } from '../../commands/run-command';
import { reachableMachines, resolveMachine } from '../../machines/resolve-machine';
import { capOutput, DEFAULT_MAX_CHARS } from '../../output';
import type { Machine } from '../../store/types';
import { defineHandler, outputMaskerFor, type ToolCallContext } from '../tool-handler';
import { execAgentParams, execRequest, execWaitMs } from './exec';

const DEFAULT_PARALLEL = 8;
/** All machines' output together stays around this size; each machine gets an equal share (4k–64k chars). */
const TOTAL_OUTPUT_CHARS = 256_000;
const MIN_CHARS_PER_MACHINE = 4_000;

type Target = { ref: string; id: string | null; name: string | null; error: LetKiteError | null };

/** Resolves the requested machines up front, so an unknown or ambiguous one is that machine's error only. */
async function targets(ctx: ToolCallContext, input: { machines?: string[]; label?: string }): Promise<Target[]> {
  if (input.label !== undefined) {
    const all = await reachableMachines(ctx.deps, ctx.principal);
    const labelled = all.filter((m) => m.labels.includes(input.label as string));
    if (labelled.length === 0) {
      throw new LetKiteError('machine_not_found', `no machine you can reach has the label "${input.label}"`);
    }
    return labelled.map((m) => ({ ref: m.id, id: m.id, name: m.name, error: null }));
  }
  const seen = new Set<string>();
  const out: Target[] = [];
  for (const ref of input.machines ?? []) {
    try {
      const m = await resolveMachine(ctx.deps, ctx.principal, ref);
      if (seen.has(m.id)) continue;
      seen.add(m.id);
      out.push({ ref, id: m.id, name: m.name, error: null });
    } catch (err) {
      out.push({ ref, id: null, name: null, error: toLetKiteError(err) });
    }
  }
  return out;
}

/** The machine records of a resolved set (for the approval binding), skipping any that vanished meanwhile. */
async function machinesOf(ctx: ToolCallContext, set: readonly { id: string }[]): Promise<Machine[]> {
  const found = await Promise.all(set.map((m) => ctx.deps.store.getMachine(m.id)));
  return found.filter((m): m is Machine => m !== null);
}

/** The command-rule reasons of every machine that needs a human, without repeats; null when none does. */
function commandRulesOf(judgements: readonly CommandJudgement[]): ApprovalReason | null {
  const rules = new Map<string, { command: string[]; layer: string; message: string }>();
  for (const j of judgements) {
    const reason = commandRuleReason(j);
    if (reason?.kind !== 'command_rule') continue;
    for (const r of reason.rules) rules.set(JSON.stringify([r.command, r.layer, r.message]), r);
  }
  return rules.size > 0 ? { kind: 'command_rule', rules: [...rules.values()] } : null;
}

/**
 * `exec_many`: the `exec` tool on each machine (the same gateway checks, the same agent re-check), at most
 * `max_parallel` at a time. A refusal, an offline machine or a failure is that machine's result, never the call's.
 *
 * Approval (DESIGN §6): every machine is checked first; when any of them has an `approve` verdict, or the policy
 * lists `exec_many` (or `exec`, which exec_many runs on each machine) under `approval.tools`, the whole call asks
 * one human once. That approval is bound to the set of resolved machines (`machineSetTarget`) and to the
 * arguments with the machine references replaced by those ids, so any other set of machines — a label that now
 * matches another machine, one more or one fewer name — is a new request. Once approved, every machine of the set
 * runs the command with `approved: true`.
 */
export const execManyHandler = defineHandler(execMany, async (input, ctx) => {
  // "Exactly one of machines or label" and "of command or argv" are the input schema's (published with it).
  const list = await targets(ctx, input);
  const { machines: _m, label: _l, max_parallel, ...perMachine } = input;
  const maxChars = Math.min(
    DEFAULT_MAX_CHARS,
    Math.max(MIN_CHARS_PER_MACHINE, Math.floor(TOTAL_OUTPUT_CHARS / Math.max(1, list.length))),
  );
  ctx.audit.details = {
    ...(input.command !== undefined ? { command: input.command } : { argv: input.argv }),
    machines: list.map((t) => t.id ?? t.ref),
  };

  // The gateway's checks on every machine first (quiet: the call audits the set): a refusal is that machine's error.
  type Checked = JudgedCommand;
  const params = execAgentParams(perMachine);
  const checked = await Promise.all(
    list.map(async (t): Promise<Checked | LetKiteError> => {
      if (t.error || t.id === null) return t.error ?? new LetKiteError('internal', 'internal error');
      try {
        return await judgeCommandOn(ctx, t.id, execRequest(perMachine), { quiet: true });
      } catch (err) {
        return toLetKiteError(err);
      }
    }),
  );
  const runnable = checked.filter((c): c is Checked => !(c instanceof LetKiteError));
  const policy = runnable[0]?.policy;
  const needsHuman = policy
    ? (commandRulesOf(runnable.map((c) => c.judgement)) ??
      policyToolReason(policy, 'exec_many') ??
      policyToolReason(policy, 'exec'))
    : null;
  let approved = false;
  if (policy && needsHuman) {
    const set = list.flatMap((t) => (t.id !== null && t.name !== null ? [{ id: t.id, name: t.name }] : []));
    const target = machineSetTarget(set);
    ctx.audit.target = target.id;
    const args = { ...input, label: undefined, machines: set.map((m) => m.id).sort() };
    ({ approved } = await requireApproval(ctx, {
      tool: 'exec_many',
      machine: target,
      policy,
      args,
      reason: needsHuman,
      // The approver sees every machine of the set and signs the same request for each of them (one that is
      // offline now may be back when the call is repeated).
      agent: { op: 'exec', params, machines: await machinesOf(ctx, set) },
    }));
  }

  // Each machine's output is masked by runCommand; an error can quote what a machine said, so it is masked too.
  const masker = await outputMaskerFor(ctx);
  const results: z.infer<typeof execMany.output>['results'] = new Array(list.length);
  const outcomes: Record<string, string> = {};
  let next = 0;
  let finished = 0;
  const worker = async () => {
    for (let i = next++; i < list.length; i = next++) {
      const t = list[i] as Target;
      const c = checked[i] as Checked | LetKiteError;
      let entry: (typeof results)[number];
      if (c instanceof LetKiteError) {
        entry = { machine: t.id ?? t.ref, name: t.name, ok: false, error: masker.maskValue(c.toPayload()) };
      } else {
        try {
          if (ctx.signal.aborted) throw new LetKiteError('timeout', 'the call was cancelled');
          const r = await runCommand(ctx, c, 'exec', params, {
            confirm: perMachine.confirm ?? false,
            approved,
            timeoutMs: execWaitMs(perMachine),
          });
          const stdout = capOutput(r.stdout, { maxChars });
          const stderr = capOutput(r.stderr, { maxChars: Math.max(1000, Math.floor(maxChars / 4)) });
          entry = {
            machine: c.machine.id,
            name: c.machine.name,
            ok: true,
            result: {
              ...r,
              stdout: stdout.text,
              stderr: stderr.text,
              truncated: r.truncated || stdout.truncated || stderr.truncated,
            },
          };
        } catch (err) {
          const error = masker.maskValue(toLetKiteError(err).toPayload());
          entry = { machine: c.machine.id, name: c.machine.name, ok: false, error };
        }
      }
      results[i] = entry;
      outcomes[entry.machine] = entry.ok ? `exit ${entry.result?.exit_code ?? 'none'}` : (entry.error?.code ?? 'error');
      finished++;
      await ctx.progress(finished, list.length, `${entry.name ?? entry.machine}: ${outcomes[entry.machine]}`);
    }
  };
  const parallel = Math.min(max_parallel ?? DEFAULT_PARALLEL, list.length);
  await Promise.all(Array.from({ length: parallel }, worker));
  ctx.audit.details = { ...ctx.audit.details, outcomes };
  const succeeded = results.filter((r) => r.ok && r.result?.exit_code === 0).length;
  return { results, succeeded, failed: results.length - succeeded };
});
