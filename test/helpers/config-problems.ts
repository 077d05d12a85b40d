import { expect } from 'vitest';
import { ConfigError } from '../../src/config/index.js';

/** The problems of the ConfigError that `fn` throws (fails the test when it throws nothing else). */
export function problemsOf(fn: () => unknown): Array<{ path: string; message: string }> {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return [...(err as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}
