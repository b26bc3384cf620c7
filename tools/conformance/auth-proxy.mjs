// A local HTTP proxy for the conformance run: the official suite takes only a URL, and the gateway wants a bearer
// token on every /mcp request. Adds `Authorization: Bearer $LETKITE_CONFORMANCE_TOKEN` (read from the environment,
// never from the command line) and forwards everything else unchanged — the Host and Origin headers included, so
// the gateway judges them as it would the client's — streams included. Listens on $LETKITE_CONFORMANCE_PORT.
import http from 'node:http';

const target = new URL(process.env.LETKITE_CONFORMANCE_TARGET ?? '');
const token = process.env.LETKITE_CONFORMANCE_TOKEN ?? '';
if (!target.host || !token) {
  console.error('auth-proxy: LETKITE_CONFORMANCE_TARGET and LETKITE_CONFORMANCE_TOKEN are required');
  process.exit(2);
}

const server = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  const upstream = http.request(
    { hostname: target.hostname, port: target.port, path: req.url, method: req.method, headers },
    (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    },
  );
  upstream.on('error', (err) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`auth-proxy: ${err.message}`);
  });
  req.pipe(upstream);
  res.on('close', () => upstream.destroy());
});
server.listen(Number(process.env.LETKITE_CONFORMANCE_PORT ?? 0), '127.0.0.1', () => {
  console.log(`auth-proxy listening on ${server.address().port}`);
});
