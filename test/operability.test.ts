import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { callTool, machineOnline, mcpClient, type TestAgent, TestGateway } from './support/letkite';
import { freePort, removeDir, repoRoot, tempDir, waitFor } from './support/processes';

/** The value of one sample in a Prometheus exposition text, or undefined when it is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got: Record<string, string> = {};
    for (const l of (m[3] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)) got[l[1] as string] = l[2] as string;
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[4]);
  }
  return undefined;
}

interface LogLine {
  level: string;
  time: string;
  msg: string;
  req_id?: string;
  method?: string;
  route?: string;
  status?: number;
  duration_ms?: number;
}

describe('operating a real gateway: health, readiness, metrics, JSON logs and SIGTERM', () => {
  let gw: TestGateway;
  let agent: TestAgent;
  let token: string;
  let client: Client;
  let metricsUrl: string;

  beforeAll(async () => {
    const metricsPort = await freePort();
    gw = await TestGateway.start({ LETKITE_METRICS_PORT: String(metricsPort), LETKITE_SHUTDOWN_TIMEOUT_MS: '15000' });
    metricsUrl = `http://127.0.0.1:${metricsPort}`;
    agent = await gw.addAgent('ops1');
    token = await gw.apiToken('ops');
    client = await mcpClient(gw.url, token);
    await machineOnline(client, 'ops1');
  });

  afterAll(async () => {
    await client?.close().catch(() => {});
    await agent?.dispose();
    await gw?.dispose();
  });

  test('/healthz and /readyz answer without a credential; /metrics only on its own loopback port', async () => {
    const health = await fetch(`${gw.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok' });
    const ready = await fetch(`${gw.url}/readyz`);
    expect(ready.status).toBe(200);
    // Readiness names the process (LETKITE_GATEWAY_ID, or a fresh gw-… per process) so a cluster's proxy logs say
    // which gateway answered.
    expect(await ready.json()).toEqual({
      status: 'ready',
      gateway: expect.stringMatching(/^gw-[0-9a-f]{12}$/),
      checks: { store: 'ok', migrations: 'ok' },
    });
    // The public port (the one a proxy forwards) never serves the metrics.
    expect((await fetch(`${gw.url}/metrics`)).status).toBe(404);
    const scrape = await fetch(`${metricsUrl}/metrics`);
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get('content-type')).toContain('text/plain; version=0.0.4');
    const text = await scrape.text();
    expect(sample(text, 'letkite_agents_online')).toBe(1);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(10_000_000);
  });

  test('a real MCP tool call is counted by tool and outcome, and the JSON request line carries no token', async () => {
    const r = await callTool<{ stdout: string }>(client, 'exec', { machine: 'ops1', command: 'echo counted' });
    expect(r.ok).toBe(true);
    expect(r.data.stdout).toBe('counted\n');
    const text = await (await fetch(`${metricsUrl}/metrics`)).text();
    expect(sample(text, 'letkite_tool_calls_total', { tool: 'exec', outcome: 'ok' })).toBe(1);
    expect(sample(text, 'letkite_tool_call_duration_seconds_count', { tool: 'exec' })).toBe(1);
    expect(
      sample(text, 'letkite_http_requests_total', { method: 'POST', route: '/mcp', status: '200' }),
    ).toBeGreaterThan(1);

    const stderr = gw.process?.stderr ?? '';
    const lines = stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as LogLine);
    // Every line the gateway logs is JSON when stderr is not a terminal; the start-up lines tests wait for are in it.
    expect(lines.some((l) => /^listening on http:\/\/localhost:\d+$/.test(l.msg) && l.level === 'info')).toBe(true);
    const mcpLines = lines.filter((l) => l.msg === 'request' && l.route === '/mcp' && l.method === 'POST');
    expect(mcpLines.length).toBeGreaterThan(1);
    for (const l of mcpLines) {
      expect(l.status).toBeTypeOf('number');
      expect(l.duration_ms).toBeTypeOf('number');
      expect(l.req_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(Date.parse(l.time)).not.toBeNaN();
    }
    expect(stderr).not.toContain(token);
    expect(stderr).not.toContain(token.slice(-16));
    expect(stderr).not.toContain('echo counted');
  });

  test('SIGTERM: readiness turns 503, the running call completes, then the process exits 0', async () => {
    const child = gw.process?.child;
    const exited = gw.process?.exited;
    if (!child || !exited) throw new Error('no gateway process');
    const running = callTool<{ stdout: string; exit_code: number }>(client, 'exec', {
      machine: 'ops1',
      command: 'sleep 2; echo finished',
    });
    // Let the request reach the agent before the signal.
    await new Promise((r) => setTimeout(r, 700));
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    // While draining, the metrics listener still answers, and /readyz names the shutdown.
    const draining = await fetch(`${metricsUrl}/readyz`);
    expect(draining.status).toBe(503);
    expect(await draining.json()).toMatchObject({ status: 'unavailable', failed: ['shutdown'] });
    // The public port takes no new connections.
    await expect(fetch(`${gw.url}/healthz`)).rejects.toThrow();

    const r = await running;
    expect(r.ok).toBe(true);
    expect(r.data).toMatchObject({ stdout: 'finished\n', exit_code: 0 });
    expect(await exited).toBe(0);
    expect(gw.process?.stderr).toMatch(/"msg":"stopped"/);
  });
});

const systemdAnalyze = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((p) => existsSync(p));

describe('infra/systemd units', () => {
  // Where systemd-analyze is installed (it is on the development machines); test/agent-systemd.test.ts boots them.
  test.skipIf(systemdAnalyze === undefined)('systemd-analyze verify accepts both units', () => {
    const dir = tempDir('units');
    try {
      for (const unit of ['letkite-gateway.service', 'letkite-agent.service']) {
        const text = readFileSync(join(repoRoot, 'infra/systemd', unit), 'utf8');
        expect(text).toContain('ExecStart=/opt/letkite/bin/letkite ');
        // verify checks that ExecStart exists: point it at this checkout's command instead of /opt/letkite.
        writeFileSync(join(dir, unit), text.replaceAll('/opt/letkite/bin/letkite', join(repoRoot, 'bin/letkite')));
      }
      const r = spawnSync(
        systemdAnalyze as string,
        ['verify', '--man=no', join(dir, 'letkite-gateway.service'), join(dir, 'letkite-agent.service')],
        { encoding: 'utf8' },
      );
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
    } finally {
      removeDir(dir);
    }
  });

  test('the gateway unit keeps its sandbox; the agent unit keeps no_new_privs and leaves the host to the ceiling', () => {
    const directives = (unit: string) =>
      readFileSync(join(repoRoot, 'infra/systemd', unit), 'utf8')
        .split('\n')
        .filter((l) => /^[A-Za-z]+=/.test(l));
    const gw = directives('letkite-gateway.service');
    for (const d of [
      'User=letkite-gateway',
      'ProtectSystem=strict',
      'ReadWritePaths=/var/lib/letkite-gateway',
      'ProtectHome=yes',
      'NoNewPrivileges=yes',
      'CapabilityBoundingSet=',
      'Restart=on-failure',
    ])
      expect(gw).toContain(d);
    const agent = directives('letkite-agent.service');
    expect(agent).toContain('NoNewPrivileges=yes');
    expect(agent).toContain('Restart=always');
    for (const d of ['ProtectSystem', 'ProtectHome', 'PrivateTmp', 'RestrictNamespaces', 'CapabilityBoundingSet'])
      expect(agent.some((l) => l.startsWith(`${d}=`))).toBe(false);
  });
});

/** A raw HTTP request from a chosen local address (127.0.0.2 is loopback too, but not a trusted proxy here). */
function rawRequest(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: Buffer;
    localAddress?: string;
    chunked?: boolean;
  },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const headers: Record<string, string> = { ...options.headers };
    if (options.body && !options.chunked) headers['content-length'] = String(options.body.length);
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: u.port,
        path: u.pathname,
        method: options.method ?? 'GET',
        headers,
        localAddress: options.localAddress,
        agent: false,
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    // The server may answer 413 and close before the whole body is sent: that is the point, not a failure.
    req.on('error', (err) => reject(err));
    if (options.body && options.chunked) {
      const body = options.body;
      for (let i = 0; i < body.length; i += 1 << 20) req.write(body.subarray(i, i + (1 << 20)));
      req.end();
    } else req.end(options.body);
  });
}

describe('behind a proxy and at the body limits (a real gateway, its JSON log read back)', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    // Only 127.0.0.1 is a trusted proxy: a peer at 127.0.0.2 stands for any client on the network.
    gw = await TestGateway.start({ LETKITE_TRUSTED_PROXIES: '127.0.0.1' });
  });

  afterAll(async () => {
    await gw?.dispose();
  });

  function requestLine(reqId: string): LogLine & { client?: string } {
    const line = (gw.process?.stderr ?? '')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as LogLine & { client?: string })
      .find((l) => l.msg === 'request' && l.req_id === reqId);
    if (!line) throw new Error(`no request line for ${reqId}`);
    return line;
  }

  test('X-Forwarded-For from an untrusted peer is ignored; from the trusted proxy the rightmost untrusted hop counts', async () => {
    // /api/session is logged at info (probes are debug): its request line names the client.
    const a = await rawRequest(`${gw.url}/api/session`, {
      headers: { 'x-forwarded-for': '203.0.113.7', 'x-request-id': 'spoofed-2' },
      localAddress: '127.0.0.2',
    });
    const b = await rawRequest(`${gw.url}/api/session`, {
      headers: { 'x-forwarded-for': '6.6.6.6, 203.0.113.7', 'x-request-id': 'proxied-2' },
      localAddress: '127.0.0.1',
    });
    expect(a.status).toBe(b.status);
    await waitFor('the request lines', () => (gw.process?.stderr ?? '').includes('"proxied-2"'));
    expect(requestLine('spoofed-2').client).toBe('127.0.0.2');
    expect(requestLine('proxied-2').client).toBe('203.0.113.7');
  });

  test('bodies over the limit answer 413 too_large on /mcp, /api and /oauth, and log no error', async () => {
    const cases: { path: string; size: number; chunked?: boolean }[] = [
      { path: '/mcp', size: 17 * 1024 * 1024 },
      { path: '/mcp', size: 17 * 1024 * 1024, chunked: true },
      { path: '/api/session/password', size: 200 * 1024 },
      { path: '/api/session/password', size: 200 * 1024, chunked: true },
      { path: '/oauth/register', size: 40 * 1024 },
      { path: '/oauth/token', size: 40 * 1024, chunked: true },
      { path: '/agent/v1/enroll', size: 200 * 1024 },
    ];
    for (const c of cases) {
      const r = await rawRequest(`${gw.url}${c.path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: gw.url },
        body: Buffer.alloc(c.size, 0x20),
        chunked: c.chunked,
      });
      expect({ path: c.path, chunked: c.chunked, status: r.status }).toEqual({
        path: c.path,
        chunked: c.chunked,
        status: 413,
      });
      expect(JSON.parse(r.body)).toMatchObject({ error: { code: 'too_large' } });
    }
    await waitFor('the request lines', () => (gw.process?.stderr.match(/"status":413/g) ?? []).length >= cases.length);
    expect(gw.process?.stderr).not.toMatch(/unhandled error/);
    expect(gw.process?.stderr).not.toMatch(/"level":"error"|"level":50/);
  });
});

describe('infra/k8s manifests (parsed: no cluster runs here)', () => {
  interface K8sObject {
    apiVersion: string;
    kind: string;
    metadata: { name: string };
    // biome-ignore lint/suspicious/noExplicitAny: a manifest is free-form YAML; the test checks what it relies on.
    spec?: any;
    data?: Record<string, string>;
  }
  const docs = (): K8sObject[] =>
    parseAllDocuments(readFileSync(join(repoRoot, 'infra/k8s/gateway.yaml'), 'utf8')).map((d) => {
      expect(d.errors).toEqual([]);
      return d.toJS() as K8sObject;
    });
  const one = (kind: string) => {
    const found = docs().filter((d) => d.kind === kind);
    expect(found, kind).toHaveLength(1);
    return found[0] as K8sObject;
  };

  test('the Deployment probes /readyz and /healthz, runs as non-root with no privileges, and sets resources', () => {
    const dep = one('Deployment');
    expect(dep.apiVersion).toBe('apps/v1');
    const pod = dep.spec.template.spec;
    expect(dep.spec.selector.matchLabels).toEqual(
      expect.objectContaining({
        'app.kubernetes.io/name': dep.spec.template.metadata.labels['app.kubernetes.io/name'],
      }),
    );
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
    const c = pod.containers[0];
    expect(c.readinessProbe.httpGet.path).toBe('/readyz');
    expect(c.livenessProbe.httpGet.path).toBe('/healthz');
    expect(c.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(c.resources.requests.memory).toBeDefined();
    expect(c.resources.limits.memory).toBeDefined();
    // The probes name ports the container declares; the data volume is the image's LETKITE_DATA.
    const ports = (c.ports as { name: string; containerPort: number }[]).map((p) => p.name);
    expect(ports).toContain(c.readinessProbe.httpGet.port);
    expect(c.volumeMounts).toContainEqual(expect.objectContaining({ mountPath: '/var/lib/letkite-gateway' }));
    // SIGTERM drains for LETKITE_SHUTDOWN_TIMEOUT_MS; the grace period must be longer.
    const config = one('ConfigMap').data ?? {};
    expect(Number(config.LETKITE_SHUTDOWN_TIMEOUT_MS) / 1000).toBeLessThan(pod.terminationGracePeriodSeconds);
    expect(c.envFrom).toEqual(
      expect.arrayContaining([
        { configMapRef: { name: one('ConfigMap').metadata.name } },
        expect.objectContaining({ secretRef: expect.objectContaining({ name: 'letkite-gateway' }) }),
      ]),
    );
  });

  test('the ConfigMap holds only LETKITE_* variables the gateway reads, and no secret', () => {
    const data = one('ConfigMap').data ?? {};
    const config = readFileSync(join(repoRoot, 'apps/gateway/src/config.ts'), 'utf8');
    for (const name of Object.keys(data)) {
      expect(name).toMatch(/^LETKITE_[A-Z_]+$/);
      expect(config, `${name} is read by loadConfig`).toContain(`env.${name}`);
      expect(name).not.toMatch(/SECRET|TOKEN|PASSWORD|SMTP_URL|DATABASE_URL/);
    }
  });

  test('the Service, PodDisruptionBudget and claim select the gateway pods', () => {
    const labels = one('Deployment').spec.template.metadata.labels;
    for (const kind of ['Service', 'PodDisruptionBudget']) {
      const spec = one(kind).spec;
      const selector = spec.selector.matchLabels ?? spec.selector;
      for (const [k, v] of Object.entries(selector)) expect(labels[k], `${kind} selector ${k}`).toBe(v);
    }
    expect(one('Service').spec.ports.map((p: { targetPort: string }) => p.targetPort)).toEqual(['http']);
    expect(one('PodDisruptionBudget').apiVersion).toBe('policy/v1');
    const claim = one('PersistentVolumeClaim').metadata.name;
    expect(one('Deployment').spec.template.spec.volumes).toContainEqual(
      expect.objectContaining({ persistentVolumeClaim: { claimName: claim } }),
    );
  });
});
