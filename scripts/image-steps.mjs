#!/usr/bin/env node
/**
 * Proves the container image's steps without a Docker engine: replays the Dockerfile in a clean
 * temporary folder and starts the result.
 *
 *   node scripts/image-steps.mjs [--keep] [--dockerfile PATH]
 *
 * 1. Copies the project's files (`git ls-files --cached --others --exclude-standard`: the tracked
 *    files plus new ones not ignored; node_modules, dist and data never come along) into a build context.
 * 2. Reads the Dockerfile and carries out its instructions, stage by stage, each stage in a folder
 *    of its own standing in for the image's file system: WORKDIR, ENV, COPY (from the context or
 *    `--from` an earlier stage), RUN (the same command line, through `sh -c`, with the stage's ENV
 *    and no other variables than PATH, HOME, TMPDIR and npm's own settings). USER, EXPOSE,
 *    `--chown` and RUN's `--mount` are image metadata or build caches and are reported, not applied.
 * 3. Starts the final stage's CMD there, with the stage's ENV and only these changes: a free PORT,
 *    HOST=127.0.0.1 (nothing leaves loopback) and SIM_PORT=0 (the demo simulator on a free port).
 * 4. Runs the HEALTHCHECK's command until it succeeds (as Docker would, within its start period),
 *    then sends SIGTERM and expects the service to exit with code 0.
 *
 * So the commands are not written twice: they are the Dockerfile's, read from it. Exit code 0 when
 * every step passed; the temporary folder is removed unless --keep.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const keep = args.includes('--keep');
const dockerfilePath = resolve(projectRoot, valueOf('--dockerfile') ?? 'Dockerfile');
const RUN_TIMEOUT_MS = 10 * 60_000;
const STOP_TIMEOUT_MS = 30_000;

function valueOf(flag) {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
}

function say(text) {
  process.stdout.write(`[image-steps] ${text}\n`);
}

class StepFailure extends Error {}

// ---------------------------------------------------------------------------------------------
// The Dockerfile, as a list of instructions.

/** Logical lines: continuations joined, comments and blank lines dropped. */
function parseDockerfile(text) {
  const instructions = [];
  let pending = '';
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    const match = /^([A-Za-z]+)\s+([\s\S]*)$/.exec(full);
    if (!match) throw new StepFailure(`cannot read Dockerfile line: ${full}`);
    instructions.push({ keyword: match[1].toUpperCase(), rest: match[2].trim() });
  }
  return instructions;
}

/** Leading `--name=value` flags of an instruction, and what follows them. */
function splitFlags(rest) {
  const flags = {};
  let remaining = rest;
  for (;;) {
    const m = /^--([a-z-]+)(?:=(\S*))?\s+/.exec(remaining);
    if (!m) return { flags, remaining };
    flags[m[1]] = m[2] ?? true;
    remaining = remaining.slice(m[0].length);
  }
}

function substitute(text, vars) {
  return text.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, a, b) => vars[a ?? b] ?? whole);
}

/** `ENV A=1 B=2` (and the old `ENV A 1` form). Values here are plain words, as in our Dockerfile. */
function parseEnv(rest) {
  if (!rest.includes('=')) {
    const [key, ...value] = rest.split(/\s+/);
    return { [key]: value.join(' ') };
  }
  const out = {};
  for (const pair of rest.match(/\S+="[^"]*"|\S+/g) ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new StepFailure(`cannot read ENV ${rest}`);
    out[pair.slice(0, eq)] = pair.slice(eq + 1).replace(/^"(.*)"$/, '$1');
  }
  return out;
}

function execForm(text, where) {
  try {
    const value = JSON.parse(text);
    if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string')) return value;
  } catch {
    // reported below
  }
  throw new StepFailure(`${where} must use the exec form (a JSON array of strings), got: ${text}`);
}

// ---------------------------------------------------------------------------------------------
// The clean build context.

function buildContext(into) {
  const listed = spawnSync('git', ['-C', projectRoot, 'ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    encoding: 'utf8',
  });
  if (listed.status !== 0) throw new StepFailure(`git ls-files failed in ${projectRoot}: ${listed.stderr || listed.error?.message}`);
  let count = 0;
  for (const file of listed.stdout.split('\0')) {
    if (!file) continue;
    const from = join(projectRoot, file);
    if (!existsSync(from) || !statSync(from).isFile()) continue; // tracked but deleted in the work tree
    mkdirSync(dirname(join(into, file)), { recursive: true });
    cpSync(from, join(into, file));
    count++;
  }
  say(`build context: ${count} files copied from ${projectRoot}`);
}

/** Node would find packages in any node_modules above the clean folder, hiding a missing dependency. */
function assertNoNodeModulesAbove(dir) {
  for (let d = dirname(dir); ; d = dirname(d)) {
    if (existsSync(join(d, 'node_modules'))) {
      throw new StepFailure(`${join(d, 'node_modules')} exists above the clean folder and would hide missing dependencies; set TMPDIR elsewhere`);
    }
    if (dirname(d) === d) return;
  }
}

// ---------------------------------------------------------------------------------------------
// Replaying the stages.

function baseEnv() {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (['PATH', 'HOME', 'TMPDIR', 'LANG'].includes(key) || /^npm_config_/i.test(key)) env[key] = value;
  }
  return env;
}

function runCommand(command, cwd, env) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('sh', ['-c', command], { cwd, env, stdio: ['ignore', 'inherit', 'inherit'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolvePromise();
      else reject(new StepFailure(`RUN ${command} failed (${signal ? `signal ${signal}` : `exit code ${code}`})`));
    });
  });
}

/** Expands a COPY source (a `*` only in the last segment) to existing paths. */
function expandSource(root, source) {
  const full = isAbsolute(source) ? join(root, source) : join(root, source);
  if (!basename(full).includes('*')) {
    if (!existsSync(full)) throw new StepFailure(`COPY source ${source} does not exist`);
    return [full];
  }
  const pattern = new RegExp(`^${basename(full).replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
  const matches = readdirSync(dirname(full)).filter((n) => pattern.test(n)).map((n) => join(dirname(full), n));
  if (matches.length === 0) throw new StepFailure(`COPY source ${source} matches nothing`);
  return matches;
}

async function replay(instructions, workRoot, contextDir) {
  const globalArgs = {};
  const stages = new Map();
  let stage = null;
  const noted = (text) => say(`  (${text})`);

  for (const { keyword, rest } of instructions) {
    if (keyword === 'ARG') {
      const [name, value = ''] = rest.split('=');
      if (!stage) globalArgs[name] = value;
      continue;
    }
    if (keyword === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(substitute(rest, globalArgs));
      if (!m) throw new StepFailure(`cannot read FROM ${rest}`);
      const name = m[2] ?? `stage${stages.size}`;
      const fs = join(workRoot, 'stages', name);
      mkdirSync(fs, { recursive: true });
      stage = { name, image: m[1], fs, workdir: '/', env: {}, cmd: null, healthcheck: null };
      stages.set(name, stage);
      say(`stage ${name} (image ${m[1]}) in ${fs}`);
      continue;
    }
    if (!stage) throw new StepFailure(`${keyword} before the first FROM`);
    const cwd = join(stage.fs, stage.workdir);
    say(`${stage.name}: ${keyword} ${rest}`);

    switch (keyword) {
      case 'WORKDIR': {
        stage.workdir = isAbsolute(rest) ? rest : join(stage.workdir, rest);
        mkdirSync(join(stage.fs, stage.workdir), { recursive: true });
        break;
      }
      case 'ENV':
        Object.assign(stage.env, parseEnv(rest));
        break;
      case 'COPY': {
        const { flags, remaining } = splitFlags(rest);
        if (flags.chown) noted(`--chown=${flags.chown}: ownership is the image's business`);
        const parts = remaining.split(/\s+/);
        const dest = parts.pop();
        const from = flags.from ? stages.get(flags.from)?.fs : contextDir;
        if (!from) throw new StepFailure(`COPY --from=${flags.from}: no such stage before this one`);
        const sources = parts.flatMap((p) => expandSource(from, p));
        const target = isAbsolute(dest) ? join(stage.fs, dest) : join(cwd, dest);
        for (const source of sources) {
          if (statSync(source).isDirectory()) {
            cpSync(source, target, { recursive: true });
          } else {
            const intoDir = dest.endsWith('/') || sources.length > 1;
            mkdirSync(intoDir ? target : dirname(target), { recursive: true });
            cpSync(source, intoDir ? join(target, basename(source)) : target);
          }
        }
        break;
      }
      case 'RUN': {
        const { flags, remaining } = splitFlags(rest);
        if (flags.mount) noted(`--mount=${flags.mount}: a build cache, not part of the image`);
        if (/(^|\s)\//.test(remaining)) {
          throw new StepFailure(`RUN ${remaining}: uses an absolute path, which would touch this machine; use paths relative to WORKDIR`);
        }
        await runCommand(remaining, cwd, { ...baseEnv(), ...stage.env });
        break;
      }
      case 'CMD':
        stage.cmd = execForm(rest, 'CMD');
        break;
      case 'HEALTHCHECK': {
        const { flags, remaining } = splitFlags(rest);
        const m = /^CMD\s+([\s\S]+)$/.exec(remaining);
        if (!m) throw new StepFailure(`HEALTHCHECK without CMD: ${rest}`);
        stage.healthcheck = { cmd: execForm(m[1], 'HEALTHCHECK CMD'), flags };
        break;
      }
      case 'USER':
      case 'EXPOSE':
      case 'LABEL':
        noted('image metadata');
        break;
      default:
        throw new StepFailure(`instruction ${keyword} is not supported by this script; teach it here`);
    }
  }
  if (!stage) throw new StepFailure('the Dockerfile has no FROM');
  return stage;
}

// ---------------------------------------------------------------------------------------------
// Starting the result.

function freePort() {
  return new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePromise(port));
    });
  });
}

function seconds(value, fallback) {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value ?? '');
  if (!m) return fallback;
  const n = Number(m[1]);
  return m[2] === 'ms' ? n / 1000 : m[2] === 'm' ? n * 60 : n;
}

async function startAndProbe(stage) {
  if (!stage.cmd) throw new StepFailure(`the final stage ${stage.name} has no CMD`);
  if (!stage.healthcheck) throw new StepFailure(`the final stage ${stage.name} has no HEALTHCHECK`);
  const cwd = join(stage.fs, stage.workdir);
  const port = await freePort();
  const env = { ...baseEnv(), ...stage.env, PORT: String(port), HOST: '127.0.0.1', SIM_PORT: '0' };
  say(`start: ${stage.cmd.join(' ')} (in ${cwd}, PORT=${port})`);
  const child = spawn(stage.cmd[0], stage.cmd.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keepOutput = (chunk) => {
    output += chunk;
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  child.stdout.on('data', keepOutput);
  child.stderr.on('data', keepOutput);
  const exited = new Promise((resolvePromise) => child.on('exit', (code, signal) => resolvePromise({ code, signal })));
  let exit = null;
  void exited.then((e) => (exit = e));

  try {
    // Docker would wait start-period + retries x interval; the probe here asks every half second.
    const waitS = seconds(stage.healthcheck.flags['start-period'], 60) + 30;
    const until = Date.now() + waitS * 1000;
    let last = null;
    for (;;) {
      if (exit) throw new StepFailure(`the service exited before it was healthy (${JSON.stringify(exit)})`);
      last = spawnSync(stage.healthcheck.cmd[0], stage.healthcheck.cmd.slice(1), { cwd, env, encoding: 'utf8', timeout: 10_000 });
      if (last.status === 0) break;
      if (Date.now() > until) throw new StepFailure(`HEALTHCHECK still failing after ${waitS} s: ${last.stderr || last.stdout}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    say(`HEALTHCHECK ${stage.healthcheck.cmd.join(' ')}: exit 0`);
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    say(`GET /healthz: ${res.status} ${await res.text()}`);
    if (res.status !== 200) throw new StepFailure(`/healthz answered ${res.status}`);

    say('SIGTERM');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    const result = await exited;
    clearTimeout(timer);
    say(`service exited: code ${result.code}, signal ${result.signal}`);
    if (result.code !== 0) throw new StepFailure(`the service did not exit cleanly on SIGTERM (${JSON.stringify(result)})`);
  } catch (err) {
    if (!exit) child.kill('SIGKILL');
    process.stdout.write(`--- service output (last part) ---\n${output.slice(-8000)}\n---\n`);
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const instructions = parseDockerfile(readFileSync(dockerfilePath, 'utf8'));
  const workRoot = mkdtempSync(join(tmpdir(), 'cloudtally-image-'));
  say(`clean folder ${workRoot}`);
  try {
    assertNoNodeModulesAbove(workRoot);
    const contextDir = join(workRoot, 'context');
    mkdirSync(contextDir);
    buildContext(contextDir);
    const finalStage = await replay(instructions, workRoot, contextDir);
    await startAndProbe(finalStage);
    say('OK: the image steps build, start, answer /healthz and stop cleanly');
  } finally {
    if (keep) say(`kept ${workRoot}`);
    else rmSync(workRoot, { recursive: true, force: true });
  }
}

main().catch((err) => {
  say(`FAILED: ${err instanceof StepFailure ? err.message : (err?.stack ?? String(err))}`);
  process.exitCode = 1;
});
