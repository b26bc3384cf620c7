import type { Stats } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { runAsCouldChangeCeiling } from '@letkite/agent';
import {
  type Ceiling,
  checkCeilingFileMode,
  DEFAULT_CEILING,
  DEFAULT_CEILING_PATH,
  parseCeilingToml,
  parseCoseKey,
  renderCeilingToml,
} from '@letkite/ceiling';
import type { ConfigIssue } from '@letkite/policy';
import { isLetKiteError } from '@letkite/protocol';
import { EXIT_OK, EXIT_USAGE } from '../io';

const USAGE = 'usage: letkite ceiling check [--ceiling PATH]';

/**
 * `letkite ceiling check [--ceiling PATH]`: prints the effective ceiling as TOML (headed by its source: the file,
 * or the defaults when there is no file), or every reason the agent would fail closed — each schema error with
 * its line, a wrong owner, a group- or world-writable file — and exits 2. `LETKITE_CEILING` is the caller's to
 * turn into `--ceiling`.
 */
export async function ceilingCheck(
  args: string[],
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream },
): Promise<number> {
  let path: string;
  try {
    const { values } = parseArgs({ args, options: { ceiling: { type: 'string' } }, strict: true });
    path = values.ceiling ?? DEFAULT_CEILING_PATH;
  } catch (err) {
    io.stderr.write(`letkite ceiling check: ${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    return EXIT_USAGE;
  }

  let stats: Stats;
  try {
    stats = await stat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      io.stdout.write(`# source: defaults (no file at ${path})\n${renderCeilingToml(DEFAULT_CEILING)}`);
      return EXIT_OK;
    }
    return fail(io, path, [`cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`]);
  }

  const problems: string[] = [];
  const uid = process.getuid?.();
  if (uid !== undefined) {
    // The agent accepts root, or its own user when it does not run as root; this mirrors that for whoever runs
    // the check.
    const expectedUids = uid === 0 ? [0] : [0, uid];
    for (const problem of checkCeilingFileMode({ uid: stats.uid, mode: stats.mode, expectedUids })) {
      problems.push(problem.message);
    }
  }
  if (!stats.isFile()) return fail(io, path, problems);

  let ceiling: Ceiling | undefined;
  try {
    ceiling = parseCeilingToml(await readFile(path, 'utf8'));
  } catch (err) {
    if (isLetKiteError(err, 'invalid_params')) {
      const issues = (err.details?.issues ?? []) as ConfigIssue[];
      for (const issue of issues) {
        const where = issue.line === undefined ? '' : `line ${issue.line}: `;
        problems.push(`${where}${issue.path === '' ? '' : `${issue.path}: `}${issue.message}`);
      }
    } else {
      problems.push(`cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
  }
  if (ceiling) {
    const writable = runAsCouldChangeCeiling(path, ceiling.run_as, uid ?? 0);
    if (writable) problems.push(writable);
  }
  if (problems.length > 0 || !ceiling) return fail(io, path, problems);
  io.stdout.write(`# source: file (${path})\n${renderCeilingToml(ceiling)}${approvalSummary(ceiling)}`);
  return EXIT_OK;
}

/**
 * What the ceiling means for approvals and programs, as TOML comments so the output still parses: the pinned
 * approvers (name, key algorithm, credential id, relying party), or why a ceiling approve rule cannot be
 * satisfied without them.
 */
export function approvalSummary(ceiling: Ceiling): string {
  const lines: string[] = [];
  if (ceiling.approvers.length === 0) {
    lines.push(
      '# approvals: no approvers pinned. The gateway vouches for policy approvals; a ceiling approve rule can',
    );
    lines.push('#   never be satisfied here (pin approvers: see the Security page of the web app).');
  } else {
    lines.push(`# approvals: verified by this machine. ${ceiling.approvers.length} pinned approver(s):`);
    for (const a of ceiling.approvers) {
      const id = a.credential_id.length > 24 ? `${a.credential_id.slice(0, 24)}…` : a.credential_id;
      lines.push(`#   ${JSON.stringify(a.name)}: ${parseCoseKey(a.public_key).alg} passkey ${id} for ${a.rp_id}`);
    }
    lines.push(
      '#   Every approval this machine requires must be signed by one of them; TOTP approvals cannot be used.',
    );
  }
  if (ceiling.commands_mode === 'allowlist') {
    lines.push(
      ceiling.allow.length === 0
        ? '# programs: allowlist mode with an empty allow list: no command runs here.'
        : `# programs: only ${ceiling.allow.length} allow pattern(s) here, and only those the policy lists too.`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function fail(io: { stderr: NodeJS.WritableStream }, path: string, problems: readonly string[]): number {
  io.stderr.write(`${path}: the agent would refuse every request (fail closed):\n`);
  for (const problem of problems) io.stderr.write(`  ${problem}\n`);
  return EXIT_USAGE;
}
