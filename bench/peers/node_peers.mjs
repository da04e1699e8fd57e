// Peer microbenchmarks for breakwater: Node.js resilience libraries.
//
// Each measurement wraps a no-op that succeeds in one library policy and
// times N sequential protected calls (each one awaited before the next),
// after a warm-up of N/10 calls through the same policy instance.
//
// Usage: node node_peers.mjs [--n N | N] [--only name,name,...]
//
// Output (stdout), one line per measurement:
//   peer\t<name>\t<ns_per_call>\t<n>
// Diagnostics go to stderr.

import {
  circuitBreaker,
  handleAll,
  ConsecutiveBreaker,
  retry,
  ExponentialBackoff,
  bulkhead,
  wrap,
} from 'cockatiel';
import CircuitBreaker from 'opossum';

const DEFAULT_N = 1_000_000;
const ALL = [
  'cockatiel.breaker',
  'cockatiel.retry',
  'cockatiel.bulkhead',
  'cockatiel.wrap',
  'opossum.breaker',
];

function usage(msg) {
  if (msg) process.stderr.write(`node_peers: ${msg}\n`);
  process.stderr.write(
    `usage: node node_peers.mjs [--n N | N] [--only name,...]\n` +
      `names: ${ALL.join(', ')}\n`,
  );
  process.exit(2);
}

function parseN(s) {
  if (!/^[0-9]+$/.test(s ?? '')) usage(`invalid N: ${s}`);
  const n = Number(s);
  if (!Number.isSafeInteger(n) || n < 1) usage(`invalid N: ${s}`);
  return n;
}

function parseArgs(argv) {
  let n = DEFAULT_N;
  let only = ALL.slice();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--n') n = parseN(argv[++i]);
    else if (a.startsWith('--n=')) n = parseN(a.slice(4));
    else if (a === '--only') only = parseOnly(argv[++i]);
    else if (a.startsWith('--only=')) only = parseOnly(a.slice(7));
    else if (a === '-h' || a === '--help') usage();
    else if (/^[0-9]+$/.test(a)) n = parseN(a);
    else usage(`unknown argument: ${a}`);
  }
  return { n, only };
}

function parseOnly(s) {
  if (s === undefined) usage('--only needs a value');
  const names = s.split(',').map((x) => x.trim()).filter(Boolean);
  if (names.length === 0) usage('--only needs at least one name');
  for (const name of names) if (!ALL.includes(name)) usage(`unknown name: ${name}`);
  return names;
}

// The protected operations. `noop` is synchronous and returns a value
// (cockatiel accepts sync or async functions); `noopAsync` is the async
// function opossum expects.
const noop = () => 1;
const noopAsync = async () => 1;

// Each factory returns { call, close } where call() returns a promise
// resolving to 1.
const factories = {
  'cockatiel.breaker': () => {
    const p = circuitBreaker(handleAll, {
      halfOpenAfter: 10000,
      breaker: new ConsecutiveBreaker(5),
    });
    return { call: () => p.execute(noop), close: () => {} };
  },
  'cockatiel.retry': () => {
    const p = retry(handleAll, { maxAttempts: 3, backoff: new ExponentialBackoff() });
    return { call: () => p.execute(noop), close: () => {} };
  },
  'cockatiel.bulkhead': () => {
    const p = bulkhead(10, 0);
    return { call: () => p.execute(noop), close: () => {} };
  },
  'cockatiel.wrap': () => {
    const p = wrap(
      bulkhead(10, 0),
      retry(handleAll, { maxAttempts: 3, backoff: new ExponentialBackoff() }),
      circuitBreaker(handleAll, {
        halfOpenAfter: 10000,
        breaker: new ConsecutiveBreaker(5),
      }),
    );
    return { call: () => p.execute(noop), close: () => {} };
  },
  'opossum.breaker': () => {
    // timeout: false -> a pure breaker, like the cockatiel one (opossum's
    // default 10 s timeout would add a setTimeout/clearTimeout per call).
    // Other values are opossum's defaults, spelled out.
    const b = new CircuitBreaker(noopAsync, {
      timeout: false,
      errorThresholdPercentage: 50,
      resetTimeout: 30000,
    });
    return { call: () => b.fire(), close: () => b.shutdown() };
  },
};

async function loop(call, count) {
  let sink = 0;
  for (let i = 0; i < count; i++) sink += await call();
  if (sink !== count) throw new Error(`expected ${count} successes, got ${sink}`);
}

async function measure(name, n) {
  const { call, close } = factories[name]();
  try {
    await loop(call, Math.max(1, Math.floor(n / 10)));
    const t0 = process.hrtime.bigint();
    await loop(call, n);
    const t1 = process.hrtime.bigint();
    return Number(t1 - t0) / n;
  } finally {
    close();
  }
}

// Reference point (stderr only): awaiting a bare sync no-op, no library.
async function baseline(n) {
  const call = async () => noop();
  await loop(call, Math.max(1, Math.floor(n / 10)));
  const t0 = process.hrtime.bigint();
  await loop(call, n);
  return Number(process.hrtime.bigint() - t0) / n;
}

const { n, only } = parseArgs(process.argv.slice(2));
process.stderr.write(
  `node_peers: node ${process.version}, n=${n}, ` +
    `baseline await of async no-op wrapper: ${(await baseline(n)).toFixed(1)} ns/call\n`,
);
for (const name of only) {
  const ns = await measure(name, n);
  process.stdout.write(`peer\t${name}\t${ns.toFixed(1)}\t${n}\n`);
}
