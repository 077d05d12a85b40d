// Preloaded into a child process (NODE_OPTIONS=--import=...): its peak resident memory, printed
// to stderr as it exits, so a test can bound the memory of a whole command. NODE_OPTIONS passes on
// to the processes it starts in turn; with REPORT_MAX_RSS_FILE set each of them also appends
// `<pid> <max-rss-kb>` to that file, so a test sees the peak of every process of the command.
import { appendFileSync, writeSync } from 'node:fs';

process.on('exit', () => {
  const kb = process.resourceUsage().maxRSS;
  writeSync(2, `\nmax-rss-kb ${kb}\n`);
  if (process.env.REPORT_MAX_RSS_FILE) appendFileSync(process.env.REPORT_MAX_RSS_FILE, `${process.pid} ${kb}\n`);
});
