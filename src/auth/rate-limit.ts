import type { LoginThrottleSettings } from '../config/index.js';

/**
 * Sign-in throttling: growing delays after failed passwords, never a lock-out.
 *
 * Two counters, both keyed by the client address (so nobody can slow down anyone else's
 * sign-ins from another address):
 * - per (account, address): after `freeFailuresPerAccount` failures, each further attempt waits
 *   firstDelay, then twice that after the next failure, up to maxDelay; a correct password resets it;
 * - per address (any accounts): the same from `freeFailuresPerAddress` failures, against one
 *   address guessing across many accounts; it is not reset by a success (else a valid account
 *   would let an attacker reset it between guesses), only forgotten.
 * A counter is forgotten after `forgetAfterHours` without a failure.
 *
 * In this process's memory: no table and no write per attempt, and a restart forgets recent
 * failures. With several replicas each counts its own attempts (an attacker spread over N replicas
 * gets N times the budget, still tiny against scrypt hashes). Memory is bounded: at most
 * `maxKeys` keys per counter, the least recently failed dropped first.
 */

export interface BackoffPolicy {
  freeFailures: number;
  firstDelayMs: number;
  maxDelayMs: number;
  forgetAfterMs: number;
}

interface Entry {
  failures: number;
  lastFailureAt: number;
}

/** Failures per key, and how long the key must wait before its next attempt. */
export class BackoffCounter {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly policy: BackoffPolicy,
    private readonly maxKeys = 50_000,
  ) {}

  /** The wait after `failures` failures: none while free, then first delay doubling to the cap. */
  delayAfter(failures: number): number {
    const { freeFailures, firstDelayMs, maxDelayMs } = this.policy;
    if (failures < freeFailures) return 0;
    // 2 ** 60 is finite, and min() caps it long before that.
    return Math.min(maxDelayMs, firstDelayMs * 2 ** Math.min(failures - freeFailures, 60));
  }

  private live(key: string, now: number): Entry | null {
    const entry = this.entries.get(key);
    if (!entry) return null;
    if (now - entry.lastFailureAt >= this.policy.forgetAfterMs) {
      this.entries.delete(key);
      return null;
    }
    return entry;
  }

  /** Milliseconds until the key may try again; 0 when it may now. */
  retryAfterMs(key: string, now: number): number {
    const entry = this.live(key, now);
    if (!entry) return 0;
    return Math.max(0, this.delayAfter(entry.failures) - (now - entry.lastFailureAt));
  }

  record(key: string, now: number): void {
    const failures = (this.live(key, now)?.failures ?? 0) + 1;
    this.entries.delete(key); // re-insert: Map order is then least recently failed first
    this.entries.set(key, { failures, lastFailureAt: now });
    while (this.entries.size > this.maxKeys) {
      this.entries.delete(this.entries.keys().next().value as string);
    }
  }

  reset(key: string): void {
    this.entries.delete(key);
  }
}

/** The two counters of a sign-in form; `account` is the normalised user name (accountKey). */
export class LoginThrottle {
  private readonly perAccount: BackoffCounter;
  private readonly perAddress: BackoffCounter;

  constructor(settings: LoginThrottleSettings, maxKeys?: number) {
    const common = {
      firstDelayMs: settings.firstDelaySeconds * 1000,
      maxDelayMs: settings.maxDelaySeconds * 1000,
      forgetAfterMs: settings.forgetAfterHours * 3_600_000,
    };
    this.perAccount = new BackoffCounter({ ...common, freeFailures: settings.freeFailuresPerAccount }, maxKeys);
    this.perAddress = new BackoffCounter({ ...common, freeFailures: settings.freeFailuresPerAddress }, maxKeys);
  }

  private static pair(account: string, address: string): string {
    return `${address}\u0000${account}`;
  }

  /** Milliseconds before this address may try this account again (0: now). */
  retryAfterMs(account: string, address: string, now: number): number {
    return Math.max(this.perAccount.retryAfterMs(LoginThrottle.pair(account, address), now), this.perAddress.retryAfterMs(address, now));
  }

  failed(account: string, address: string, now: number): void {
    this.perAccount.record(LoginThrottle.pair(account, address), now);
    this.perAddress.record(address, now);
  }

  succeeded(account: string, address: string): void {
    this.perAccount.reset(LoginThrottle.pair(account, address));
  }
}
