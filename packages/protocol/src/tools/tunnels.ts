import { z } from 'zod';
import { defineTool } from '../define-tool';
import type { ErrorCode } from '../errors';
import { splitTunnelTarget, TunnelKind } from '../ops-tunnel';
import { MachineRef } from './common';

/**
 * The tunnel tools (DESIGN §7 tunnels group): a TCP port or a web service on (or reachable from) a machine, carried
 * through the agent's own socket, within the policy's and the ceiling's `tunnel_targets`.
 */

/** Longest a tunnel may stay open. */
export const MAX_TUNNEL_TTL_S = 24 * 3600;
/** How long a tunnel stays open when the call does not say. */
export const DEFAULT_TUNNEL_TTL_S = 3600;

const TunnelTargetText = z
  .string()
  .min(3)
  .max(300)
  .refine((t) => splitTunnelTarget(t) !== undefined, 'target must be "host:port" (IPv6 in brackets: "[::1]:5432")')
  .describe(
    'Where the tunnel leads, as seen from the machine: "host:port" ("127.0.0.1:5432", "db.internal:443", "[::1]:8080"). Must be allowed by the policy\'s and the machine\'s tunnel_targets; a name is resolved on the machine and the address it resolves to must be allowed too.',
  );

export const tunnelOpenInput = z.strictObject({
  machine: MachineRef,
  target: TunnelTargetText,
  kind: TunnelKind.describe(
    'http: a web service the gateway serves at the returned url to people signed in to the account and to this connection (send it as Bearer); tcp: a port on the gateway that forwards every connection.',
  ),
  ttl_s: z
    .number()
    .int()
    .min(10)
    .max(MAX_TUNNEL_TTL_S)
    .optional()
    .describe(
      `Seconds until the tunnel closes by itself (default ${DEFAULT_TUNNEL_TTL_S}, at most ${MAX_TUNNEL_TTL_S}).`,
    ),
});

export const TunnelInfo = z.object({
  tunnel_id: z.string(),
  machine: z.string().describe('The machine id.'),
  target: z.string(),
  kind: TunnelKind,
  expires_at: z.string().describe('ISO-8601 time the tunnel closes by itself.'),
  url: z.string().optional().describe('kind http: where the gateway serves it.'),
  tcp: z
    .object({ host: z.string(), port: z.number().int() })
    .optional()
    .describe('kind tcp: where the gateway listens for connections to forward.'),
  connections: z.number().int().describe('Connections carried right now.'),
});
export type TunnelInfo = z.infer<typeof TunnelInfo>;

const tunnelErrors = [
  'machine_not_found',
  'ambiguous_machine',
  'machine_offline',
  'blocked_by_ceiling',
  'blocked_by_policy',
  'not_found',
  'rate_limited',
  'unsupported',
  'timeout',
  'approval_denied',
  'approval_expired',
  'too_many_pending_approvals',
] as const satisfies readonly ErrorCode[];

export const tunnelOpen = defineTool({
  name: 'tunnel_open',
  title: 'Open a tunnel',
  description:
    'Opens a tunnel to host:port as seen from a machine, carried over the machine agent\'s own connection (the gateway never dials the machine). kind "http" serves a web service at url (people signed in to the account, and this connection\'s bearer token; only the Host header is rewritten and no LetKite credential is passed on); kind "tcp" forwards every connection to the gateway\'s tcp.host:tcp.port. The target must be allowed by both the policy and the machine\'s ceiling (checked again by the machine itself after resolving the name). Closes at expires_at, on tunnel_close, when the connection or token is revoked and when the machine goes offline.',
  input: tunnelOpenInput,
  output: TunnelInfo.omit({ connections: true, machine: true }),
  // It reaches beyond the machine (another host on its network) and changes what is reachable from outside.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  gated: true,
  // blocked_by_policy / blocked_by_ceiling: the target is outside tunnel_targets (layer in details); not_found: the
  // name does not resolve on the machine; rate_limited: no free port in the gateway's range, or too many tunnels.
  errors: tunnelErrors,
});

export const tunnelClose = defineTool({
  name: 'tunnel_close',
  title: 'Close a tunnel',
  description: 'Closes a tunnel opened by this account and cuts the connections it carries.',
  input: z.strictObject({ tunnel_id: z.string().min(1).max(64) }),
  output: z.object({ tunnel_id: z.string(), closed: z.literal(true) }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  // not_found: no such open tunnel in this account (or it already closed).
  errors: ['not_found'],
});

export const tunnelsList = defineTool({
  name: 'tunnels_list',
  title: 'List tunnels',
  description: 'The tunnels open in this account on this gateway: target, kind, where they are served and until when.',
  input: z.strictObject({}),
  output: z.object({ tunnels: z.array(TunnelInfo) }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  errors: [],
});

/** The tunnel tools, in the order DESIGN §7 lists them. */
export const tunnelTools = [tunnelOpen, tunnelClose, tunnelsList] as const;
