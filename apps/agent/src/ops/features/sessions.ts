import { shellOps } from '@letkite/protocol/ops-shell';
import { SessionManager } from '../../shell-sessions/session-manager';
import type { Feature } from '../feature';
import { withOutput } from '../send-chunks';

/** `shell_run`: persistent shell sessions; they end with the agent. */
export function sessionsFeature(): Feature<'shell_run'> {
  const sessions = new SessionManager();
  return {
    schemas: shellOps,
    handlers: {
      shell_run: async (r) => withOutput(r, await sessions.run(r.params, r.context, r.ceiling, r.signal)),
    },
    close: () => sessions.close(),
  };
}
