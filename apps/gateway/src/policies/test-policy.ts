import { judgeCommand } from '@letkite/ceiling';
import { parsePolicyToml } from '@letkite/policy';
import { LetKiteError, toLetKiteError } from '@letkite/protocol';
import { TestPolicyRequest, type TestPolicyResponse } from '@letkite/protocol/api';
import type { GatewayDeps } from '../deps';
import { resolveMachine } from '../machines/resolve-machine';
import { clampForMachine, reportedCeiling, resolveGrantPolicy, revisionOf } from '../policy/resolve-policy';
import { defineService } from '../services/define-service';
import type { ServiceContext } from '../services/service-context';
import type { Machine } from '../store/types';
import { accountOf } from './list-policies';
import type { PolicyDeps } from './policy-views';

type TestDeps = PolicyDeps & Pick<GatewayDeps, 'identity'>;

/** A policy as the tester judges with it: a stored or built-in one by name (current revision), or unsaved TOML. */
async function policyUnderTest(ctx: ServiceContext<TestDeps>, name: string | undefined, source: string | undefined) {
  if (name !== undefined) {
    const policy = await resolveGrantPolicy(ctx.deps.policies, accountOf(ctx), {
      policy: name,
      machines: '*',
      scopes: '*',
    }).catch((err: unknown) => {
      const e = toLetKiteError(err);
      throw e.code === 'blocked_by_policy' ? new LetKiteError('not_found', `no policy "${name}"`, { policy: name }) : e;
    });
    // A built-in has no stored revision: it is version 0.
    return { policy, version: revisionOf(policy)?.version ?? 0 };
  }
  // Unsaved TOML (the editor's buffer): every document problem refuses it with its line; its name is not checked.
  return { policy: parsePolicyToml(source ?? ''), version: null };
}

/** The machine to judge on: one the person reaches, by id or unique name. */
async function machineUnderTest(ctx: ServiceContext<TestDeps>, ref: string): Promise<Machine> {
  const actor = ctx.actor;
  const seeker =
    actor.kind === 'user'
      ? { accountId: accountOf(ctx), userId: actor.user.userId, role: actor.user.role }
      : { accountId: accountOf(ctx), userId: '', role: 'owner' };
  return resolveMachine(ctx.deps, seeker, ref);
}

/**
 * The rule tester: judges each command exactly as the gateway's exec does and the agent repeats —
 * `judgeCommand(policy clamped to the machine's reported ceiling, that ceiling, command)` — and answers every
 * reason (layer, rule, message). Without a machine no ceiling bounds the policy; a machine whose ceiling is
 * invalid refuses everything, as it would for a real call.
 */
export const testPolicy = defineService({
  name: 'policies.test',
  input: TestPolicyRequest,
  permission: 'policies.manage',
  async run(ctx: ServiceContext<TestDeps>, input): Promise<TestPolicyResponse> {
    const { policy, version } = await policyUnderTest(ctx, input.name, input.source);
    const machine = input.machine === undefined ? null : await machineUnderTest(ctx, input.machine);
    let ceilingRefusal: LetKiteError | null = null;
    if (machine) {
      try {
        reportedCeiling(machine);
      } catch (err) {
        ceilingRefusal = toLetKiteError(err);
      }
    }
    const approvalTool = (policy.approval.tools as readonly string[]).includes('exec');
    const results = input.commands.map((command) => {
      if (ceilingRefusal) {
        return {
          command,
          verdict: 'deny' as const,
          layer: 'ceiling' as const,
          approval_tool: approvalTool,
          reasons: [
            { command: [command], layer: 'ceiling', verdict: 'deny' as const, message: ceilingRefusal.message },
          ],
        };
      }
      const clamped = machine ? clampForMachine(policy, machine) : clampForMachine(policy, OPEN_MACHINE);
      const judged = judgeCommand(clamped, machine ? reportedCeiling(machine) : null, command, {});
      return {
        command,
        verdict: judged.verdict,
        layer: judged.layer,
        approval_tool: approvalTool,
        reasons: judged.reasons.map((r) => ({ ...r, command: [...r.command] })),
      };
    });
    return {
      policy: { name: policy.name, version },
      machine: machine
        ? {
            id: machine.id,
            name: machine.name,
            ceiling: ceilingRefusal ? 'error' : machine.ceiling === null ? 'none' : 'reported',
            ceiling_error: machine.ceilingError,
          }
        : null,
      results,
    };
  },
});

/** A machine that has reported no ceiling: `clampForMachine` then bounds the policy by nothing. */
const OPEN_MACHINE: Machine = {
  id: '',
  accountId: '',
  name: '',
  publicKey: '',
  hostname: null,
  os: null,
  osRelease: null,
  arch: null,
  agentVersion: null,
  labels: [],
  ceiling: null,
  ceilingSource: null,
  ceilingError: null,
  enrolledAt: '',
  lastSeenAt: null,
};
