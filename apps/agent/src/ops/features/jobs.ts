import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jobOps } from '@letkite/protocol/ops-jobs';
import { JobManager } from '../../jobs/job-manager';
import type { Feature, FeatureDeps } from '../feature';

/**
 * Background jobs. They live under `<stateDir>/jobs` (a private runtime directory when the agent has none); the
 * jobs of an earlier run are read on the first job request, and running ones end with the agent, recorded as lost.
 */
export function jobsFeature({
  stateDir,
  log,
}: FeatureDeps): Feature<'job_start' | 'job_status' | 'job_output' | 'job_stop'> {
  const jobs = new JobManager(stateDir ?? join(tmpdir(), `letkite-agent-${process.getuid?.() ?? 0}`), log);
  return {
    schemas: jobOps,
    handlers: {
      job_start: (r) => jobs.start(r.params, r.context, r.ceiling),
      job_status: (r) => jobs.status(r.params, r.context),
      job_output: (r) => jobs.output(r.params, r.context),
      job_stop: (r) => jobs.stop(r.params, r.context),
    },
    close: () => jobs.close(),
  };
}
