// The exec launcher: a small, persistent, plain-Node child of the agent (builtins only, no tsx) that does the
// actual spawn() of `exec` commands. Forking copies the parent's page tables, so spawning from this ~40 MB process
// is several times cheaper than from the agent itself. It is a thin proxy: the agent (launcher-client.ts, runExec
// in exec.ts) decides everything — timeouts, cancellation, killing the process group, the linger kill — and kills
// groups itself by pid; this process only spawns, feeds stdin and extra fds, keeps the newest `max` bytes of each
// output stream, and reports pid / exit / close / errors over the IPC channel.
//
// Its own environment is a fixed allowlist (launcherEnv in launcher-client.ts); each command's comes per spawn.
//
// Messages in:  { t: 'spawn', id, file, args, cwd, env, uid?, gid?, extraFds, stdin?, max }
// Messages out: { t: 'ready' } once; per id: { t: 'pid', pid } | { t: 'throw', name, message, code } |
//               { t: 'error', code } | { t: 'exit', code, sig } |
//               { t: 'close', code, sig, stdout, stderr, stdoutCut, stderrCut }
import { spawn } from 'node:child_process';

/** Keeps the newest `limit` bytes of a stream; remembers whether anything was dropped (same rule as TailBuffer). */
function tail(limit) {
  let chunks = [];
  let size = 0;
  const t = {
    cut: false,
    write(chunk) {
      if (chunk.length >= limit) {
        t.cut ||= chunk.length > limit || size > 0;
        chunks = [chunk.subarray(chunk.length - limit)];
        size = limit;
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
      while (size > limit) {
        const head = chunks[0];
        const excess = size - limit;
        if (head.length <= excess) {
          chunks.shift();
          size -= head.length;
        } else {
          chunks[0] = head.subarray(excess);
          size -= excess;
        }
        t.cut = true;
      }
    },
    buffer: () => Buffer.concat(chunks, size),
  };
  return t;
}

function send(message) {
  if (process.connected) process.send(message);
}

function run(m) {
  const id = m.id;
  let child;
  try {
    child = spawn(m.file, m.args, {
      cwd: m.cwd,
      env: m.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe', ...m.extraFds.map(() => 'pipe')],
      ...(m.uid === undefined ? {} : { uid: m.uid }),
      ...(m.gid === undefined ? {} : { gid: m.gid }),
    });
  } catch (err) {
    send({ t: 'throw', id, name: err?.name, message: String(err?.message ?? err), code: err?.code });
    return;
  }
  if (child.pid !== undefined) send({ t: 'pid', id, pid: child.pid });
  m.extraFds.forEach((text, i) => {
    const stream = child.stdio[3 + i];
    // A helper that refused before reading its fd closes it: EPIPE is its refusal, not ours to crash on.
    stream?.on('error', () => {});
    if (stream && text !== null) stream.end(text);
  });
  const out = tail(m.max);
  const err = tail(m.max);
  child.stdout.on('data', (c) => out.write(c));
  child.stderr.on('data', (c) => err.write(c));
  child.stdin.on('error', () => {
    // The command exited without reading all its input: not an error of ours.
  });
  if (m.stdin !== undefined) child.stdin.end(m.stdin);
  else child.stdin.end();
  child.on('error', (e) => send({ t: 'error', id, code: e.code }));
  child.on('exit', (code, sig) => send({ t: 'exit', id, code, sig }));
  child.on('close', (code, sig) => {
    send({
      t: 'close',
      id,
      code,
      sig,
      stdout: out.buffer(),
      stderr: err.buffer(),
      stdoutCut: out.cut,
      stderrCut: err.cut,
    });
  });
}

process.on('message', (m) => {
  if (m && m.t === 'spawn') run(m);
});
// The agent is gone: so is the reason to exist. Commands keep running as they would after an in-process agent
// died (their pipes close with us).
process.on('disconnect', () => process.exit(0));
send({ t: 'ready' });
