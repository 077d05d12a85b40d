/**
 * The command line as a child process: `node --import tsx src/cli.ts <args>` with an environment
 * of only what the test gives (no DATABASE_URL, cloud or SIM_* settings of the test's own shell).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface CliProcess {
  child: ChildProcess;
  pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when stdout has matched `pattern`; rejects when the process exits first. */
  waitForOutput(pattern: RegExp): Promise<void>;
}

/** The test process's environment without any cloudtally, simulator or database setting. */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(CLOUDTALLY_|SIM_|DATABASE_URL$|PORT$|HOST$|LOG_LEVEL$)/.test(key)) continue;
    env[key] = value;
  }
  return env;
}

export function spawnCli(args: string[], env: Record<string, string>): CliProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    cwd: root,
    env: { ...baseEnv(), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    for (const listener of listeners) listener();
  });
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      // Let the pipes drain before answering.
      setImmediate(() => {
        resolve({ code, signal });
        for (const listener of listeners) listener();
      });
    }),
  );
  let ended = false;
  void exited.then(() => (ended = true));
  return {
    child,
    pid: child.pid!,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitForOutput: (pattern) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (pattern.test(out)) {
            listeners.delete(check);
            resolve();
          } else if (ended) {
            listeners.delete(check);
            reject(new Error(`exited before printing ${pattern}; stdout:\n${out}\nstderr:\n${err}`));
          }
        };
        listeners.add(check);
        check();
      }),
  };
}
