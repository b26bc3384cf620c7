import type { AgentOp } from '@letkite/protocol';
import type { Feature, FeatureDeps } from './feature';
import { execFeature } from './features/exec';

export type FeatureName =
  | 'exec'
  | 'sessions'
  | 'jobs'
  | 'terminals'
  | 'files'
  | 'gui'
  | 'transfers'
  | 'tunnels'
  | 'wake';

/**
 * Which feature serves each op of the protocol registry: a new op does not compile until it is listed here, and
 * its feature's handlers do not compile until they handle it. This map, not the registry, is what the agent's
 * core holds, so that no op's schemas are built before its first request (issue #13: the idle agent's memory).
 */
export const opFeatures = {
  exec: 'exec',
  shell_run: 'sessions',
  job_start: 'jobs',
  job_status: 'jobs',
  job_output: 'jobs',
  job_stop: 'jobs',
  terminal_open: 'terminals',
  terminal_send: 'terminals',
  terminal_read: 'terminals',
  terminal_text: 'terminals',
  terminal_close: 'terminals',
  read_file: 'files',
  list_dir: 'files',
  write_file: 'files',
  delete_path: 'files',
  git_status: 'files',
  git_diff: 'files',
  gui_observe: 'gui',
  gui_act: 'gui',
  transfer_send: 'transfers',
  transfer_receive: 'transfers',
  tunnel_connect: 'tunnels',
  wake_send: 'wake',
} as const satisfies Record<AgentOp, FeatureName>;

/** The ops a feature serves. */
export type OpsOf<F extends FeatureName> = { [K in AgentOp]: (typeof opFeatures)[K] extends F ? K : never }[AgentOp];

/** Whether the agent serves an op of that name (names every object inherits are not ops). */
export function isServedOp(name: string): name is AgentOp {
  return Object.hasOwn(opFeatures, name);
}

/**
 * How each feature is made. Every one but `exec` is a dynamic import: the standalone bundle evaluates its modules
 * (and the protocol schemas they import from `@letkite/protocol/ops-*`) on the first request for it, so an agent
 * that only runs commands never builds the file, job, terminal, screen, transfer, tunnel or wake schemas and
 * code. They import op schemas from those subpaths, never from the package's index: a name imported through the
 * index makes the index evaluate its module at start (test/agent-bundle-lazy.test.ts checks the bundle).
 */
export const featureLoaders: { readonly [F in FeatureName]: (deps: FeatureDeps) => Promise<Feature<OpsOf<F>>> } = {
  exec: async () => execFeature(),
  sessions: async () => (await import('./features/sessions')).sessionsFeature(),
  jobs: async (deps) => (await import('./features/jobs')).jobsFeature(deps),
  terminals: async () => (await import('./features/terminals')).terminalsFeature(),
  files: async () => (await import('./features/files')).filesFeature(),
  gui: async (deps) => (await import('./features/gui')).guiFeature(deps),
  transfers: async (deps) => (await import('./features/transfers')).transfersFeature(deps),
  tunnels: async () => (await import('./features/tunnels')).tunnelsFeature(),
  wake: async () => (await import('./features/wake')).wakeFeature(),
};
