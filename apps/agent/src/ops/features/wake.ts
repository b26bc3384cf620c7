import { wakeOps } from '@letkite/protocol/ops-wake';
import type { Feature } from '../feature';
import { wakeSend } from '../wake-send';

/** Wake-on-LAN: the magic packet to a sleeping machine on one of this machine's networks. */
export function wakeFeature(): Feature<'wake_send'> {
  return { schemas: wakeOps, handlers: { wake_send: (r) => wakeSend(r.params, r.context, r.ceiling) } };
}
