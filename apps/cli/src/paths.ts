import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** Where the gateway keeps its data: --data, else LETKITE_DATA, else ./.letkite */
export function dataDir(flag: string | undefined, env: Record<string, string | undefined>): string {
  return resolve(flag ?? env.LETKITE_DATA ?? './.letkite');
}

/** Where an agent keeps its identity: --state-dir, else LETKITE_AGENT_STATE, else a system or per-user folder. */
export function agentStateDir(flag: string | undefined, env: Record<string, string | undefined>): string {
  if (flag) return resolve(flag);
  if (env.LETKITE_AGENT_STATE) return resolve(env.LETKITE_AGENT_STATE);
  return process.getuid?.() === 0 ? '/var/lib/letkite' : join(homedir(), '.letkite', 'agent');
}
