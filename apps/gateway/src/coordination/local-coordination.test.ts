import { coordinationContract } from './coordination-contract';
import { LocalCoordination } from './local-coordination';

// Embedded mode: the process is the cluster, so both "gateways" are the same object.
coordinationContract('LocalCoordination', async () => {
  const c = new LocalCoordination();
  return { a: c, b: c, close: () => c.close() };
});
