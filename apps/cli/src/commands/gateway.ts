import { parseArgs } from 'node:util';
import { loadConfig, startGateway } from '@letkite/gateway';
import { type CliIo, EXIT_OK } from '../io';

/** `letkite gateway`: the production server, configured by LETKITE_* variables (flags override a few). */
export async function gateway(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { port: { type: 'string' }, data: { type: 'string' }, host: { type: 'string' } },
    strict: true,
  });
  const config = loadConfig({
    ...io.env,
    ...(values.port ? { LETKITE_PORT: values.port } : {}),
    ...(values.data ? { LETKITE_DATA: values.data } : {}),
    ...(values.host ? { LETKITE_HOST: values.host } : {}),
  });
  // Structured logs (JSON lines on stderr; readable on a terminal): LETKITE_LOG_LEVEL, LETKITE_LOG_FORMAT.
  const gw = await startGateway(config);
  io.stdout.write(`LetKite gateway on ${gw.url}\n`);
  await waitForSignal();
  await gw.close();
  return EXIT_OK;
}

export function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}
