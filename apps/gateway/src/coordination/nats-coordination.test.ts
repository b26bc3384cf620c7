import { randomBytes } from 'node:crypto';
import { expect, test } from 'vitest';
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

test('an unreachable NATS is refused with a clear error that does not echo the URL', async () => {
  await expect(NatsCoordination.connect({ url: 'nats://user:s3cret@127.0.0.1:1' })).rejects.toThrow(
    /^cannot reach NATS at LETKITE_NATS_URL \(/,
  );
  await expect(NatsCoordination.connect({ url: 'nats://user:s3cret@127.0.0.1:1' })).rejects.not.toThrow(/s3cret/);
});
