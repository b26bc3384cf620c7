import {
  AppName,
  CommandRule,
  DEFAULT_SECRET_PATHS,
  FileRules,
  GuiLevel,
  PathPattern,
  ShellLevel,
  TunnelTarget,
} from '@letkite/policy';
import { z } from 'zod';
import { parseCoseKey } from './cose-key';

/** `any`: policies choose their command mode | `allowlist`: every policy runs in allowlist mode here. */
export const ceilingCommandModes = ['any', 'allowlist'] as const;
export const CeilingCommandMode = z.enum(ceilingCommandModes);
export type CeilingCommandMode = z.infer<typeof CeilingCommandMode>;

/** An OS account name (POSIX, or a Windows account without domain). */
export const AccountName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9._-]{0,63}\$?$/, { message: 'must be an account name like "letkite"' });

const noControl = (s: string) => !/[\0-\x1f\x7f]/.test(s);
const base64url = /^[A-Za-z0-9_-]+$/;

/**
 * An approver this machine trusts (DESIGN §6, §9): a person's passkey, pinned by the machine's administrator. An
 * approval the agent requires counts only when this passkey signed the exact binding (approval-proof.ts in
 * @letkite/protocol). The web app's security page prints this entry for each of your passkeys.
 */
export const PinnedApprover = z.strictObject({
  /** Who this is, for logs and refusals. */
  name: z.string().min(1).max(100).refine(noControl, { message: 'contains a control character' }),
  /** The passkey's credential id (base64url), as the web app shows it. */
  credential_id: z.string().min(1).max(1400).regex(base64url, { message: 'must be base64url' }),
  /** The passkey's public key: a COSE key (base64url) for ES256, EdDSA (Ed25519) or RS256. */
  public_key: z
    .string()
    .min(1)
    .max(2048)
    .superRefine((text, ctx) => {
      try {
        parseCoseKey(text);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    }),
  /** The WebAuthn relying party the passkey belongs to: the gateway's host name (e.g. "letkite.example.com"). */
  rp_id: z
    .string()
    .min(1)
    .max(253)
    .regex(/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/, {
      message: 'must be a lower-case host name like "letkite.example.com"',
    }),
});
export type PinnedApprover = z.infer<typeof PinnedApprover>;

/**
 * `/etc/letkite/ceiling.toml` (DESIGN §5): the most any policy gets on this machine. `version = 1` is required so
 * a file meant for a later format is refused instead of half-understood. Every other key defaults to the value
 * the agent uses when the file is missing (`DEFAULT_CEILING`), so a file holding only `version = 1` means
 * exactly "the defaults". Unknown keys are errors: a typo must never silently widen anything.
 */
export const Ceiling = z.strictObject({
  version: z.literal(1, { message: 'must be 1 (version = 1 is required)' }),
  /** Commands run, but only inside the sandbox: useful out of the box, and the OS boundary still holds. */
  shell: ShellLevel.default('sandboxed'),
  /** Command rules stay the policy's choice; the sandbox and the built-in layers bound them already. */
  commands_mode: CeilingCommandMode.default('any'),
  /**
   * The run-as account's home and /tmp read-write, the rest read-only: what a coding or ops assistant needs,
   * while the system itself (and other users' files the OS lets it read) cannot be changed.
   */
  files: FileRules.default([
    { path: '~', access: 'rw' },
    { path: '/tmp', access: 'rw' },
    { path: '*', access: 'ro' },
  ]),
  /** The usual secret files stay hidden from every policy unless the administrator says otherwise. */
  deny: z.array(PathPattern).default([...DEFAULT_SECRET_PATHS]),
  /** Screen access is something the person at the machine must opt into. */
  gui: GuiLevel.default('off'),
  /** When non-empty: screen tools only see and drive these applications. */
  gui_apps: z.array(AppName).default([]),
  /** No tunnels: reaching other hosts through this machine is opt-in. */
  tunnel_targets: z.array(TunnelTarget).default([]),
  /** Interactive terminals are shells like exec; the shell level and the sandbox bound them the same way. */
  terminals: z.boolean().default(true),
  /** File transfers move only what the file rules already allow. */
  transfers: z.boolean().default(true),
  /** Wake-on-LAN sends packets to other devices on the local network: opt-in. */
  wake: z.boolean().default(false),
  /** An unprivileged account made for LetKite; root only when the administrator writes `run_as = "root"`. */
  run_as: AccountName.default('letkite'),
  /** Added to every policy's rules as a layer of its own; strictest verdict wins. */
  rules: z.array(CommandRule).default([]),
  /**
   * With `commands_mode = "allowlist"`: the programs (+ argument patterns, the policy's `[commands] allow` syntax)
   * this machine runs at all. A command runs only when this list AND the policy's list allow it; no policy can
   * widen it, and an empty list runs nothing.
   */
  allow: z.array(z.string().min(1).max(4096)).default([]),
  /**
   * Passkeys this machine trusts to approve calls. None: a ceiling `approve` rule can never be satisfied here. Any:
   * every approval the agent requires must carry one of these passkeys' signatures over the exact call.
   */
  approvers: z
    .array(PinnedApprover)
    .max(100)
    .default([])
    .superRefine((list, ctx) => {
      const seen = new Set<string>();
      list.forEach((a, i) => {
        if (seen.has(a.credential_id)) {
          ctx.addIssue({ code: 'custom', path: [i, 'credential_id'], message: 'is pinned twice' });
        }
        seen.add(a.credential_id);
      });
    }),
});
export type Ceiling = z.infer<typeof Ceiling>;
/** What a ceiling document may contain before defaults are applied. */
export type CeilingInput = z.input<typeof Ceiling>;

/**
 * Whether this machine verifies approvals itself (approvers are pinned): then every approval the agent requires
 * needs a passkey signature by one of them, and TOTP approvals cannot be used for calls to it.
 */
export function verifiesApprovals(ceiling: Pick<Ceiling, 'approvers'> | null): boolean {
  return (ceiling?.approvers.length ?? 0) > 0;
}
