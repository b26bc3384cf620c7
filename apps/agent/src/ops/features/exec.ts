import { execOps } from '@letkite/protocol/ops';
import { execCommand } from '../../executors/exec-command';
import type { Feature } from '../feature';
import { withOutput } from '../send-chunks';

/** `exec`: the one group every agent uses, so it is part of the agent's core (features.ts imports it statically). */
export function execFeature(): Feature<'exec'> {
  return {
    schemas: execOps,
    handlers: { exec: async (r) => withOutput(r, await execCommand(r.params, r.context, r.ceiling, r.signal)) },
  };
}
