import { hashPassword } from '../auth/index.js';

/**
 * `npm run cli -- hash-password`: reads a password from standard input (never from the command
 * line, where it would land in the shell history) and prints its scrypt hash for the config file.
 */
export async function hashPasswordCommand(): Promise<number> {
  if (process.stdin.isTTY) process.stderr.write('Password (input is not hidden; pipe it in to keep it off the screen): ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) {
    chunks.push(chunk as Buffer);
    if (process.stdin.isTTY && chunk.includes(10)) break;
  }
  const password = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  if (password.length < 12) {
    process.stderr.write('A password needs at least 12 characters.\n');
    return 65; // EX_DATAERR
  }
  process.stdout.write(`${await hashPassword(password)}\n`);
  return 0;
}
