import { z } from 'zod';
import { ApprovalProof } from './approval-proof';
import { ErrorPayload } from './errors';
import { NetworkReport } from './network-report';
import { TransferEntry } from './transfer-entry';

/**
 * Gateway↔agent frames. Every frame is one JSON text message (≤ MAX_FRAME_BYTES) and one member of these
 * discriminated unions. The handshake:
 *
 *   gateway → challenge {nonce: N_g}     agent → auth {machine_id, nonce: N_a, signature over agentAuthText, info}
 *   gateway → welcome {machine_id, proof: its identity key's signature over gatewayProofText}
 *                                        (or an `error` frame, then close)
 *
 * Authentication is mutual (docs/design/agent-trust.md): the agent pinned the gateway's identity key at enrollment
 * and obeys nothing (no request, cancel, credit or data frame) until the welcome's proof verifies against that pin.
 * Both signed texts bind both fresh nonces, the machine id and the protocol version, so an old welcome cannot be
 * replayed and, having different labels, neither side's signature can be reflected as the other's.
 *
 * After that the gateway sends `request` frames; the agent answers each with zero or more `chunk` frames and
 * exactly one `response` or `error` frame carrying the same id. Heartbeats are WebSocket pings. A streamed request
 * (a transfer) also carries `entry`/`entry_end` records, binary data frames (data-frame.ts) and `credit` frames in
 * either direction while it runs (ops-transfer.ts describes the stream).
 */

/** What an agent says about itself on every connect. Untrusted text: render as text, never as HTML. */
export const AgentInfo = z.object({
  hostname: z.string().max(255),
  os: z.string().max(64),
  os_release: z.string().max(255).optional(),
  arch: z.string().max(32),
  version: z.string().max(64),
  protocol: z.number().int(),
  /**
   * The machine's interfaces (MAC, IPv4 subnets) for Wake-on-LAN (ops-wake.ts); absent from older agents. A
   * report that does not parse is dropped rather than refusing the connection.
   */
  network: NetworkReport.optional().catch(undefined),
});
export type AgentInfo = z.infer<typeof AgentInfo>;

/** What both handshake signatures bind: the protocol, the machine and the fresh nonce of each side. */
export interface HandshakeTranscript {
  protocol: number;
  machineId: string;
  /** The gateway's challenge nonce (N_g). */
  gatewayNonce: string;
  /** The agent's own nonce (N_a), fresh on every connect. */
  agentNonce: string;
}

/** A JSON array keeps the fields unambiguous whatever characters a machine id holds. */
function transcriptText(label: string, t: HandshakeTranscript): string {
  return JSON.stringify([label, t.protocol, t.machineId, t.gatewayNonce, t.agentNonce]);
}

/** Text the agent signs with its enrolled key to prove it is the machine it claims to be. */
export function agentAuthText(t: HandshakeTranscript): string {
  return transcriptText('letkite-agent-auth', t);
}

/** Text the gateway signs with its identity key (pinned by the agent at enrollment) to prove it is the gateway. */
export function gatewayProofText(t: HandshakeTranscript): string {
  return transcriptText('letkite-gateway-proof', t);
}

const id = z.string().min(1).max(64);
/** A handshake nonce: fresh random bytes, base64url. */
const nonce = z.string().regex(/^[A-Za-z0-9_-]{16,128}$/);
/** An Ed25519 signature, base64. */
const signature = z.string().min(1).max(256);

/** Facts the agent needs to re-check a request on its side (DESIGN §3: every call is checked twice). */
export const RequestContext = z.object({
  /** The connection's policy (packages/policy format), already resolved by the gateway. */
  policy: z.unknown(),
  /** The caller passed `confirm: true` after showing the person the command. */
  confirm: z.boolean().optional(),
  /** The gateway holds a fresh human approval for exactly this call. */
  approved: z.boolean().optional(),
  /** The approver's passkey assertion over this call's binding, which the agent verifies itself (approval-proof.ts). */
  approval_proof: ApprovalProof.optional(),
  /** For the agent's local log: who asked (never a secret). */
  actor: z.string().max(200).optional(),
});
export type RequestContext = z.infer<typeof RequestContext>;

// gateway → agent
export const ChallengeFrame = z.object({
  type: z.literal('challenge'),
  nonce,
  protocol: z.number().int(),
});
export const WelcomeFrame = z.object({
  type: z.literal('welcome'),
  machine_id: id,
  heartbeat_ms: z.number().int().positive(),
  /** The gateway identity key's signature over `gatewayProofText` (base64). */
  proof: signature,
  /**
   * Cluster mode: the public URLs of the cluster's live gateways (this one first). The agent keeps them and, when
   * its gateway goes away, dials the others; each must still prove the pinned identity (docs/design/cluster.md).
   * Older agents ignore the field.
   */
  gateways: z.array(z.string().url().max(2048)).max(16).optional(),
});
export const RequestFrame = z.object({
  type: z.literal('request'),
  id,
  op: z.string().min(1).max(64),
  params: z.unknown(),
  context: RequestContext,
});
export const CancelFrame = z.object({ type: z.literal('cancel'), id });
/**
 * Flow control: the sender of this frame has consumed `bytes` more of request `id`'s stream and grants that much
 * more. Gateway → agent for what the agent streams; agent → gateway for data the gateway pushes (ops-transfer.ts).
 */
export const CreditFrame = z.object({ type: z.literal('credit'), id, bytes: z.number().int().positive() });
/** A streamed request's next file, directory or symlink (transfers; ops-transfer.ts). Either way. */
export const EntryFrame = z.object({ type: z.literal('entry'), id, entry: TransferEntry });
/** The end of a file's bytes in a stream: how many there were and their SHA-256. Either way. */
export const EntryEndFrame = z.object({
  type: z.literal('entry_end'),
  id,
  bytes: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
/** Gateway → agent: the stream pushed to request `id` is complete; `sha256` is the source's digest of it. */
export const StreamEndFrame = z.object({
  type: z.literal('stream_end'),
  id,
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});

// agent → gateway
export const AuthFrame = z.object({
  type: z.literal('auth'),
  machine_id: id,
  /** The agent's fresh nonce (N_a) that the gateway's proof must cover. */
  nonce,
  /** The machine key's signature over `agentAuthText` (base64). */
  signature,
  info: AgentInfo,
});
export const ChunkFrame = z.object({
  type: z.literal('chunk'),
  id,
  stream: z.string().min(1).max(32),
  /** UTF-8 text, or base64 when `encoding` is base64. */
  data: z.string(),
  encoding: z.enum(['utf8', 'base64']).optional(),
});
export const ResponseFrame = z.object({ type: z.literal('response'), id, result: z.unknown() });
/** The agent's effective ceiling, or why it is failing closed; sent after welcome and whenever it changes. */
export const ReportFrame = z.object({
  type: z.literal('report'),
  ceiling: z.unknown().nullable(),
  ceiling_source: z.enum(['file', 'defaults', 'error']),
  ceiling_error: z.string().max(4000).optional(),
});

// either way
/** An error answering request `id`, or (without id) a fatal protocol error sent just before closing. */
export const ErrorFrame = z.object({ type: z.literal('error'), id: id.optional(), error: ErrorPayload });

export const GatewayFrame = z.discriminatedUnion('type', [
  ChallengeFrame,
  WelcomeFrame,
  RequestFrame,
  CancelFrame,
  CreditFrame,
  EntryFrame,
  EntryEndFrame,
  StreamEndFrame,
  ErrorFrame,
]);
export type GatewayFrame = z.infer<typeof GatewayFrame>;

export const AgentFrame = z.discriminatedUnion('type', [
  AuthFrame,
  ChunkFrame,
  ResponseFrame,
  ReportFrame,
  ErrorFrame,
  CreditFrame,
  EntryFrame,
  EntryEndFrame,
]);
export type AgentFrame = z.infer<typeof AgentFrame>;

export type RequestFrame = z.infer<typeof RequestFrame>;
export type AuthFrame = z.infer<typeof AuthFrame>;
export type WelcomeFrame = z.infer<typeof WelcomeFrame>;
export type ChunkFrame = z.infer<typeof ChunkFrame>;
export type ReportFrame = z.infer<typeof ReportFrame>;
export type CreditFrame = z.infer<typeof CreditFrame>;
export type EntryFrame = z.infer<typeof EntryFrame>;
export type EntryEndFrame = z.infer<typeof EntryEndFrame>;
export type StreamEndFrame = z.infer<typeof StreamEndFrame>;

/** Enrollment over HTTP (POST /agent/v1/enroll): a one-time join token buys a machine id for a public key. */
export const EnrollRequest = z.object({
  join_token: z.string().min(1).max(512),
  /** Ed25519 public key, SPKI DER, base64. */
  public_key: z.string().min(1).max(512),
  info: AgentInfo,
  name: z.string().min(1).max(128).optional(),
});
export type EnrollRequest = z.infer<typeof EnrollRequest>;
export const EnrollResponse = z.object({
  machine_id: id,
  name: z.string(),
  /** The gateway's long-lived Ed25519 identity key (SPKI DER, base64): the agent pins it and checks every welcome. */
  gateway_public_key: z.string().min(1).max(512),
});
export type EnrollResponse = z.infer<typeof EnrollResponse>;
