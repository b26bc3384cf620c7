import { isIP } from 'node:net';
import { matchTunnelTarget, parseTunnelTarget } from '@letkite/policy';
import {
  DEFAULT_TUNNEL_TTL_S,
  LetKiteError,
  splitTunnelTarget,
  tunnelClose,
  tunnelOpen,
  tunnelsList,
} from '@letkite/protocol';
import { approvalProofContext, policyToolReason, requireApproval } from '../../approvals/gate';
import { prepareMachineCall } from '../../machines/prepare-machine-call';
import { reportedCeiling } from '../../policy/resolve-policy';
import { actorLabel } from '../../services/actor';
import type { TunnelRegistry } from '../../tunnels/tunnel-registry';
import { defineHandler, type ToolCallContext } from '../tool-handler';

function registryOf(ctx: ToolCallContext): TunnelRegistry {
  const registry = ctx.deps.tunnels;
  if (!registry) throw new LetKiteError('unsupported', 'this gateway does not serve tunnels');
  return registry;
}

/**
 * Whether a list may allow `host:port` as far as the gateway can tell without resolving: an IP literal must
 * match, a name must match by name — or the list must hold an address pattern for that port, since the name may
 * resolve into it (the agent resolves it and decides).
 */
function mayAllow(list: readonly string[], host: string, port: number): boolean {
  if (matchTunnelTarget(host, port, list)) return true;
  if (isIP(host) !== 0) return false;
  return list.some((text) => {
    const t = parseTunnelTarget(text);
    return t !== undefined && t.kind !== 'host' && t.portLow <= port && port <= t.portHigh;
  });
}

/**
 * `tunnel_open`: the gateway checks the target against the policy and the ceiling the machine last reported
 * (refusing early, with the layer), asks a human when the policy lists the tool under `approval.tools`, then
 * opens the tunnel. The agent checks every connection again against its real ceiling, after resolving the name.
 */
export const tunnelOpenHandler = defineHandler(tunnelOpen, async (input, ctx) => {
  const registry = registryOf(ctx);
  const ttlS = input.ttl_s ?? DEFAULT_TUNNEL_TTL_S;
  ctx.audit.details = { target: input.target, kind: input.kind, ttl_s: ttlS };
  const target = splitTunnelTarget(input.target);
  if (!target) throw new LetKiteError('invalid_params', `not host:port: "${input.target}"`);
  const m = await prepareMachineCall(ctx, input.machine);
  const ceiling = reportedCeiling(m.machine);
  if (ceiling && !mayAllow(ceiling.tunnel_targets, target.host, target.port)) {
    throw new LetKiteError(
      'blocked_by_ceiling',
      `machine "${m.machine.name}" does not allow tunnels to ${input.target}`,
      {
        layer: 'ceiling',
        key: 'tunnel_targets',
        machine: m.machine.id,
      },
    );
  }
  if (!mayAllow(m.policy.tunnel_targets, target.host, target.port)) {
    throw new LetKiteError('blocked_by_policy', `the policy does not allow tunnels to ${input.target}`, {
      layer: 'policy',
      key: 'tunnel_targets',
    });
  }
  const needsHuman = policyToolReason(m.policy, 'tunnel_open');
  ctx.audit.decision = needsHuman ? 'approve' : 'allow';
  const approved = needsHuman
    ? (
        await requireApproval(ctx, {
          tool: 'tunnel_open',
          machine: m.machine,
          policy: m.policy,
          args: input,
          reason: needsHuman,
        })
      ).approved
    : false;
  const tunnel = await registry.open({
    owner: {
      accountId: ctx.principal.accountId,
      credentialId: ctx.principal.credentialId,
      credentialKind: ctx.principal.kind,
      actor: actorLabel(ctx.actor),
    },
    machineId: m.machine.id,
    target: input.target,
    host: target.host,
    port: target.port,
    kind: input.kind,
    ttlS,
    context: { policy: m.policy, approved, actor: actorLabel(ctx.actor), ...approvalProofContext(ctx) },
  });
  const { connections: _c, machine: _m, ...info } = registry.info(tunnel);
  ctx.audit.details = { ...ctx.audit.details, tunnel_id: tunnel.id, ...(info.tcp ? { tcp: info.tcp } : {}) };
  return info;
});

export const tunnelCloseHandler = defineHandler(tunnelClose, async (input, ctx) => {
  const registry = registryOf(ctx);
  ctx.audit.details = { tunnel_id: input.tunnel_id };
  const tunnel = registry.get(input.tunnel_id);
  if (!tunnel || tunnel.owner.accountId !== ctx.principal.accountId) {
    throw new LetKiteError('not_found', `no open tunnel "${input.tunnel_id}"`);
  }
  ctx.audit.target = tunnel.machineId;
  await registry.close(tunnel.id, 'closed');
  return { tunnel_id: tunnel.id, closed: true as const };
});

export const tunnelsListHandler = defineHandler(tunnelsList, async (_input, ctx) => {
  const registry = registryOf(ctx);
  return { tunnels: registry.list(ctx.principal.accountId).map((t) => registry.info(t)) };
});
