import { randomBytes } from 'node:crypto';
import { coordinationContract } from './coordination-contract';
import { NatsCoordination } from './nats-coordination';

// Real NATS with JetStream on 127.0.0.1:4222 (.ci/run starts it). Two connections are two gateways; a fresh prefix
// keeps each run's subjects and buckets apart, and the buckets are deleted afterwards.
const url = process.env.LETKITE_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

coordinationContract('NatsCoordination', async () => {
  const prefix = `lktest${randomBytes(4).toString('hex')}`;
  const a = await NatsCoordination.connect({ url, prefix });
  const b = await NatsCoordination.connect({ url, prefix });
  return {
    a,
    b,
    close: async () => {
      await a.destroyBuckets();
      await b.close();
      await a.close();
    },
  };
});
