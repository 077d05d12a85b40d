/** Checks shared by the environment and the file sections. Reasons never echo the value checked. */
import cron from 'node-cron';
import { z } from 'zod';

export const nonEmptyName = z.string().trim().min(1, { error: 'must not be empty' }).max(255, { error: 'must be at most 255 characters' });
export const positiveInt = z.int({ error: 'must be a positive whole number' }).positive({ error: 'must be a positive whole number' });

export function hasProtocol(value: string, protocols: string[]): boolean {
  try {
    return protocols.includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

const MAIL_ADDRESS = /^[^\s@<>"(),;:]+@[^\s@<>"(),;:]+\.?[^\s@<>"(),;:]*$/;

/** `local@domain`, or `Display Name <local@domain>`. */
export function isMailAddress(text: string): boolean {
  const named = /^[^<>\r\n]*<([^<>]+)>$/.exec(text);
  return MAIL_ADDRESS.test(named ? named[1]! : text);
}

export const cronExpression = z.string().superRefine((pattern, ctx) => {
  const reason = cronProblem(pattern);
  if (reason) ctx.addIssue({ code: 'custom', message: reason });
});

function cronProblem(pattern: string): string | null {
  try {
    if (cron.validate(pattern)) return null;
    const errors = cron.validateDetailed(pattern).errors;
    const detail = errors.map((e) => e.message).join('; ');
    return `is not a valid cron expression${detail ? ` (${detail})` : ''}`;
  } catch (err) {
    return `is not a valid cron expression (${(err as Error).message})`;
  }
}
