import { z } from 'zod';

/**
 * Approvals the machine verifies itself (DESIGN §6, §9). The approver's passkey signs a WebAuthn challenge that IS
 * the hash of an `ApprovalBinding`: which tool, which approval, until when, under which policy, and for each
 * machine the exact agent request it approves (op + the SHA-256 of the canonical JSON of the op's params, which the
 * agent recomputes from the request it receives). The gateway stores the assertion and attaches `binding` +
 * `assertion` to the repeated call's context; the agent checks the signature against approver keys pinned in its
 * ceiling and every field of the binding against what it is about to run. Pure: no I/O, no clock, no node: modules
 * (SHA-256 and base64url are implemented here so gateway, agent and web app derive the same bytes).
 */

/**
 * Canonical JSON: object keys sorted by UTF-16 code units at every depth, no whitespace, `undefined` members
 * dropped (`undefined` array items become null, as JSON.stringify writes them), strings and numbers as
 * `JSON.stringify` writes them. Two values that mean the same thing after a JSON round trip give the same text.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`cannot hash the number ${value}`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  throw new TypeError(`cannot hash a value of type ${typeof value}`);
}

// SHA-256 (FIPS 180-4), for the few hundred bytes a binding has: simple rather than fast.
const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

/** SHA-256 of some bytes. */
export function sha256(data: Uint8Array): Uint8Array {
  const h = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const blocks = Math.ceil((data.length + 9) / 64);
  const padded = new Uint8Array(blocks * 64);
  padded.set(data);
  padded[data.length] = 0x80;
  const bits = data.length * 8;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(bits / 0x100000000));
  view.setUint32(padded.length - 4, bits >>> 0);
  const w = new Uint32Array(64);
  const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));
  for (let block = 0; block < blocks; block++) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(block * 64 + i * 4);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15] as number;
      const b = w[i - 2] as number;
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
      w[i] = ((w[i - 16] as number) + s0 + (w[i - 7] as number) + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, hh] = Array.from(h) as [number, number, number, number, number, number, number, number];
    for (let i = 0; i < 64; i++) {
      const t1 =
        (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + (K[i] as number) + (w[i] as number)) >>>
        0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) >>> 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) >>> 0;
    }
    const add = [a, b, c, d, e, f, g, hh];
    for (let i = 0; i < 8; i++) h[i] = ((h[i] as number) + (add[i] as number)) >>> 0;
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) outView.setUint32(i * 4, h[i] as number);
  return out;
}

/** Lower-case hex SHA-256 of a string's UTF-8 bytes. */
export function sha256Hex(text: string): string {
  return [...sha256(new TextEncoder().encode(text))].map((b) => b.toString(16).padStart(2, '0')).join('');
}

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** base64url without padding (RFC 4648 §5), as WebAuthn writes challenges. */
export function base64url(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    const chars = i + 2 < bytes.length ? 4 : i + 1 < bytes.length ? 3 : 2;
    for (let c = 0; c < chars; c++) out += B64URL[(n >> (18 - 6 * c)) & 63];
  }
  return out;
}

/** The SHA-256 (hex) an approval binds one agent request to: canonical JSON of `{ op, params }` as received. */
export function requestSha256(op: string, params: unknown): string {
  return sha256Hex(canonicalJson({ op, params: params ?? null }));
}

/** The SHA-256 (hex) of a request context's policy (canonical JSON): what an approval was given under. */
export function policySha256(policy: unknown): string {
  return sha256Hex(canonicalJson(policy ?? null));
}

const b64u = (max: number) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, 'must be base64url')
    .max(max);
const hex64 = z.string().regex(/^[0-9a-f]{64}$/);

/** One machine's part of an approval: the exact agent request it may run once. */
export const ApprovalTarget = z.strictObject({
  machine_id: z.string().min(1).max(64),
  op: z.string().min(1).max(64),
  request_sha256: hex64,
});
export type ApprovalTarget = z.infer<typeof ApprovalTarget>;

/** At most this many machines in one approval (exec_many over a label). */
export const MAX_APPROVAL_TARGETS = 1000;

/**
 * What an approver's passkey signs. `targets` are sorted by machine id and each machine appears once: one
 * approval of an exec_many covers several machines, and each agent finds its own entry.
 */
export const ApprovalBinding = z.strictObject({
  type: z.literal('letkite.approval'),
  v: z.literal(1),
  approval_id: z.string().min(1).max(64),
  /** The MCP tool the person approved (exec, exec_many, write_file …). */
  tool: z.string().min(1).max(64),
  /** `policySha256` of the policy the calls carry. */
  policy_sha256: hex64,
  /** ISO-8601 UTC; the agent checks it with its own clock. */
  expires_at: z.iso.datetime(),
  targets: z.array(ApprovalTarget).min(1).max(MAX_APPROVAL_TARGETS),
});
export type ApprovalBinding = z.infer<typeof ApprovalBinding>;

/** The parts of a WebAuthn assertion (`navigator.credentials.get()`) the agent needs, base64url as browsers send. */
export const ApprovalAssertion = z.strictObject({
  credential_id: b64u(1400).min(1),
  authenticator_data: b64u(8192).min(50),
  client_data_json: b64u(8192).min(1),
  signature: b64u(2048).min(1),
});
export type ApprovalAssertion = z.infer<typeof ApprovalAssertion>;

/** What the gateway attaches to an approved call's context (`RequestContext.approval_proof`). */
export const ApprovalProof = z.strictObject({ binding: ApprovalBinding, assertion: ApprovalAssertion });
export type ApprovalProof = z.infer<typeof ApprovalProof>;

/** A binding in its one canonical form (targets sorted by machine id, then op). */
export function approvalBinding(input: {
  approvalId: string;
  tool: string;
  policy: unknown;
  expiresAt: string;
  targets: readonly { machineId: string; op: string; params: unknown }[];
}): ApprovalBinding {
  const targets = input.targets
    .map((t) => ({ machine_id: t.machineId, op: t.op, request_sha256: requestSha256(t.op, t.params) }))
    .sort((a, b) => (a.machine_id < b.machine_id ? -1 : a.machine_id > b.machine_id ? 1 : a.op < b.op ? -1 : 1));
  return {
    type: 'letkite.approval',
    v: 1,
    approval_id: input.approvalId,
    tool: input.tool,
    policy_sha256: policySha256(input.policy),
    expires_at: new Date(input.expiresAt).toISOString(),
    targets,
  };
}

/**
 * The WebAuthn challenge for a binding: base64url(SHA-256(canonical JSON of the binding)). The browser echoes it
 * verbatim as `clientDataJSON.challenge`, which is what the agent compares.
 */
export function approvalChallenge(binding: ApprovalBinding): string {
  return base64url(sha256(new TextEncoder().encode(canonicalJson(binding))));
}
