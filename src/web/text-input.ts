import type { NextFunction, Request, Response } from 'express';
import { invalidParameters, type FieldError } from './errors.js';

/**
 * Refuses a request whose query or form fields hold a NUL character. Postgres text cannot hold
 * one, so such a value would fail deep inside a report or an action as an internal error; here
 * it is a 400 naming the field, before any route sees it.
 */
export function refuseNulCharacters(req: Request, _res: Response, next: NextFunction): void {
  const errors: FieldError[] = [];
  const check = (where: string, fields: unknown) => {
    if (fields === null || typeof fields !== 'object') return;
    for (const [name, value] of Object.entries(fields)) {
      const values = Array.isArray(value) ? value : [value];
      if (values.some((v) => typeof v === 'string' && v.includes('\u0000'))) {
        errors.push({ field: `${where}.${name}`, message: 'must not contain a NUL character' });
      }
    }
  };
  check('query', req.query);
  check('body', req.body);
  next(errors.length > 0 ? invalidParameters(errors) : undefined);
}
