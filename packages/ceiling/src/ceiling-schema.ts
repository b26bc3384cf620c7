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

/** `any`: policies choose their command mode | `allowlist`: every policy runs in allowlist mode here. */
export const ceilingCommandModes = ['any', 'allowlist'] as const;
export const CeilingCommandMode = z.enum(ceilingCommandModes);
export type CeilingCommandMode = z.infer<typeof CeilingCommandMode>;

/** An OS account name (POSIX, or a Windows account without domain). */
export const AccountName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9._-]{0,63}\$?$/, { message: 'must be an account name like "letkite"' });

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
});
export type Ceiling = z.infer<typeof Ceiling>;
/** What a ceiling document may contain before defaults are applied. */
export type CeilingInput = z.input<typeof Ceiling>;
