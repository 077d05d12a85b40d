/**
 * An exclusive lock on a PGlite data folder. PGlite is one process's database: two processes
 * writing one folder corrupt it. The lock is a file, `<dataDir>/cloudtally.lock`, created with an
 * exclusive create and holding the holder's pid, host and start time. A lock whose process is gone
 * (its pid is dead, or the machine was rebooted since) is taken over; the lock is removed on
 * release and, as a last resort, when the process exits.
 */
import { closeSync, openSync, readFileSync, realpathSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

export const LOCK_FILE_NAME = 'cloudtally.lock';

interface LockContent {
  pid: number;
  host: string;
  /** Linux boot id: a different one means the holder ran before a reboot. */
  bootId: string | null;
  startedAt: string;
}

/** Another live process holds the data folder. */
export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: { pid: number; host: string; startedAt: string },
    readonly lockFile: string,
  ) {
    super(
      `the data folder ${dataDir} is in use by another cloudtally process (pid ${holder.pid} on ${holder.host}, since ${holder.startedAt}); ` +
        `stop it first, or if no such process runs, delete ${lockFile}`,
    );
    this.name = 'DataDirLockedError';
  }
}

export interface DataDirLock {
  readonly file: string;
  release(): void;
}

/** Folders this process holds (a second open in the same process is refused too). */
const heldHere = new Set<string>();

function readBootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readLock(file: string): LockContent | null {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockContent>;
    if (typeof parsed.pid !== 'number' || !Number.isInteger(parsed.pid) || parsed.pid <= 0) return null;
    return {
      pid: parsed.pid,
      host: typeof parsed.host === 'string' ? parsed.host : 'unknown host',
      bootId: typeof parsed.bootId === 'string' ? parsed.bootId : null,
      startedAt: typeof parsed.startedAt === 'string' ? parsed.startedAt : 'unknown time',
    };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw err;
    return null; // unreadable or half-written: treated as stale below
  }
}

/**
 * Whether the holder is gone. A lock from another host cannot be checked (a shared volume):
 * it counts as held. Our own pid without our own hold is a previous life of this process number
 * (a container restarted after a crash runs as the same pid).
 */
function isStale(lock: LockContent | null, key: string, bootId: string | null): boolean {
  if (!lock) return true;
  if (lock.host !== hostname()) return false;
  if (lock.bootId && bootId && lock.bootId !== bootId) return true;
  if (lock.pid === process.pid) return !heldHere.has(key);
  return !isAlive(lock.pid);
}

/** Takes the lock on `dataDir` (which must exist), or throws DataDirLockedError naming the holder. */
export function lockDataDir(dataDir: string): DataDirLock {
  const file = join(dataDir, LOCK_FILE_NAME);
  const key = realpathSync(dataDir);
  const bootId = readBootId();
  const content: LockContent = { pid: process.pid, host: hostname(), bootId, startedAt: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    let fd: number;
    try {
      fd = openSync(file, 'wx', 0o644);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let current: LockContent | null;
      try {
        current = readLock(file);
      } catch {
        continue; // removed between our create and our read: try again
      }
      if (attempt >= 3 || !isStale(current, key, bootId)) {
        throw new DataDirLockedError(dataDir, current ?? { pid: 0, host: 'unknown host', startedAt: 'unknown time' }, file);
      }
      // The holder is gone: take its lock over.
      try {
        unlinkSync(file);
      } catch (unlinkErr) {
        if ((unlinkErr as NodeJS.ErrnoException).code !== 'ENOENT') throw unlinkErr;
      }
      continue;
    }
    try {
      writeSync(fd, `${JSON.stringify(content)}\n`);
    } finally {
      closeSync(fd);
    }
    break;
  }
  heldHere.add(key);

  let released = false;
  const removeFile = () => {
    // Only our own lock: never one a later process took over.
    try {
      if (readLock(file)?.pid === process.pid) unlinkSync(file);
    } catch {
      // already gone
    }
  };
  const onExit = () => removeFile();
  process.once('exit', onExit);
  return {
    file,
    release() {
      if (released) return;
      released = true;
      process.off('exit', onExit);
      removeFile();
      heldHere.delete(key);
    },
  };
}
