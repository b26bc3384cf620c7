import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Ceiling, renderCeilingToml, renderDefaultCeilingToml } from '@letkite/ceiling';

/**
 * Writes a commented ceiling.toml holding the documented defaults (optionally with some keys changed), unless a
 * ceiling already exists: the administrator then sees at once what can be tightened. Never overwrites.
 * Returns whether it wrote the file. `mode` defaults to 0644 (/etc/letkite/ceiling.toml is no secret); `letkite
 * start` writes its local agent's ceiling 0600 inside the private data directory.
 */
export function writeDefaultCeiling(
  path: string,
  overrides: Partial<Ceiling> = {},
  options: { mode?: number } = {},
): boolean {
  if (existsSync(path)) return false;
  mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
  const changed = Object.keys(overrides);
  const text =
    changed.length === 0
      ? renderDefaultCeilingToml()
      : [
          '# LetKite machine ceiling: the most any policy can do on this machine, whatever the gateway says.',
          '# Must be owned by root (or by the account the agent runs as) and not writable by others; edits apply at',
          `# once. The documented defaults, except: ${changed.join(', ')}. Check it with: letkite ceiling check`,
          '',
          renderCeilingToml(Ceiling.parse({ version: 1, ...overrides }), { comments: true }),
        ].join('\n');
  writeFileSync(path, text, { mode: options.mode ?? 0o644, flag: 'wx' });
  chmodSync(path, options.mode ?? 0o644);
  return true;
}
