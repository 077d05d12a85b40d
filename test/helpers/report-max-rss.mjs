// Preloaded into a child process (NODE_OPTIONS=--import=...): its peak resident memory, printed
// to stderr as it exits, so a test can bound the memory of a whole command.
import { writeSync } from 'node:fs';

process.on('exit', () => {
  writeSync(2, `\nmax-rss-kb ${process.resourceUsage().maxRSS}\n`);
});
