import { type AgentOp, LetKiteError, type ParsedAgentOpParams } from '@letkite/protocol';
import { parseParams } from '../files/parse-params';
import type { Feature, FeatureDeps, OpHandler, OpRequest } from './feature';
import { type FeatureName, featureLoaders, isServedOp, opFeatures } from './features';

export type { Feature, FeatureDeps, OpHandler, OpRequest } from './feature';
export { type FeatureName, isServedOp, opFeatures } from './features';

/** A request before dispatch: its op is whatever name the gateway sent. */
export type RawOpRequest = Omit<OpRequest<AgentOp>, 'op' | 'params'> & { op: string; params: unknown };

/**
 * Every op the agent serves, each feature (features.ts) loaded on its first request and kept: its module, its
 * schemas and what it runs (sessions, jobs, terminals, file workers), which end at `close()`.
 */
export class AgentOps {
  private readonly loading = new Map<FeatureName, Promise<Feature<AgentOp>>>();
  private readonly loaded = new Set<Feature<AgentOp>>();
  private closed = false;

  constructor(
    private readonly deps: FeatureDeps,
    private readonly loaders: typeof featureLoaders = featureLoaders,
  ) {}

  /**
   * Runs one request: an op this agent does not know is `unsupported`, and params that fail the op's schema are
   * `invalid_params` naming each bad field, before any handler sees them (fail closed: a compromised gateway gets
   * no further than the schema).
   */
  dispatch(request: RawOpRequest): Promise<unknown> {
    const { op } = request;
    if (!isServedOp(op)) return Promise.reject(new LetKiteError('unsupported', `this agent does not support "${op}"`));
    return this.run(op, request);
  }

  /** Agent shutdown: every loaded feature ends what it runs; a feature still loading ends as soon as it is made. */
  close(): void {
    this.closed = true;
    for (const feature of this.loaded) feature.close?.();
    this.loaded.clear();
  }

  private async run<K extends AgentOp>(op: K, request: RawOpRequest): Promise<unknown> {
    const feature = (await this.feature(opFeatures[op])) as unknown as Feature<K>;
    const params = parseParams(feature.schemas[op].params, request.params) as ParsedAgentOpParams<K>;
    const handler = feature.handlers[op] as OpHandler<K>;
    return handler({ ...request, op, params });
  }

  private feature(name: FeatureName): Promise<Feature<AgentOp>> {
    const pending = this.loading.get(name);
    if (pending) return pending;
    const made = (this.loaders[name](this.deps) as Promise<Feature<AgentOp>>).catch(missingFiles).then((feature) => {
      if (this.closed) {
        feature.close?.();
        throw new LetKiteError('machine_offline', 'the agent is shutting down');
      }
      this.loaded.add(feature);
      return feature;
    });
    // A feature that could not be made (a state directory it cannot create) is tried again by the next request.
    made.catch(() => this.loading.delete(name));
    this.loading.set(name, made);
    return made;
  }
}

/**
 * A feature's module is a file beside the agent's entry (a chunk of the bundle). If it is gone, the agent's files
 * were replaced while it ran (an upgrade, `npm run build` under `npm start`): every later group would fail the
 * same way until the agent restarts (install.sh restarts it), so that is what the error says.
 */
function missingFiles(err: unknown): never {
  if ((err as { code?: unknown } | null)?.code === 'ERR_MODULE_NOT_FOUND')
    throw new LetKiteError(
      'internal',
      "this agent's files were replaced while it ran (an upgrade?): restart it (systemctl restart letkite-agent)",
    );
  throw err;
}
