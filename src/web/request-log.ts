import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../logger.js';

declare module 'express-serve-static-core' {
  interface Locals {
    requestId: string;
    log: Logger;
  }
}

/** A caller's id is echoed only if it is short and plain, so it cannot forge log lines or headers. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdOf(req: Request): string {
  const given = req.get('x-request-id');
  return given && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Query parameters whose values are credentials (the OpenID Connect callback's code and state). */
const SECRET_PARAMS = /([?&](?:code|state)=)[^&#]*/g;

/** The URL as logged: credentials in the query replaced. */
export function loggableUrl(url: string): string {
  return url.replace(SECRET_PARAMS, '$1[redacted]');
}

/**
 * Gives every request an id (x-request-id, echoed or made), a child logger carrying it, and one
 * JSON log line when the response is done. Headers and cookies are never logged.
 */
export function requestLogging(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    const requestId = requestIdOf(req);
    res.locals.requestId = requestId;
    res.locals.log = logger.child({ reqId: requestId });
    res.setHeader('x-request-id', requestId);
    let logged = false;
    const done = (event: 'finish' | 'close') => {
      if (logged) return;
      logged = true;
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const entry = {
        method: req.method,
        url: loggableUrl(req.originalUrl),
        status: res.statusCode,
        ms: Math.round(ms * 10) / 10,
        bytes: Number(res.getHeader('content-length')) || undefined,
        aborted: event === 'close' && !res.writableFinished ? true : undefined,
      };
      if (res.statusCode >= 500 || entry.aborted) res.locals.log.warn(entry, 'request');
      else res.locals.log.info(entry, 'request');
    };
    res.on('finish', () => done('finish'));
    res.on('close', () => done('close'));
    next();
  };
}
