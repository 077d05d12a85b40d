import type { NextFunction, Request, Response } from 'express';
import { listSample } from '../logger.js';
import { reportUrls } from '../present/urls.js';
import { asClientError, ClientError, DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable, notFound } from './errors.js';
import type { RenderPage } from './render.js';

/** API and CSV routes (and clients that ask for JSON) get JSON errors; pages get an HTML page. */
function wantsJson(req: Request): boolean {
  return req.path.startsWith('/api/') || req.accepts(['html', 'json']) === 'json';
}

const TITLES: Record<number, string> = {
  400: 'Invalid parameters',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  500: 'Something went wrong',
  503: 'Database unavailable',
};

const DATABASE_UNAVAILABLE_MESSAGE = `The database is not available right now (it may be restarting); try again in ${DATABASE_RETRY_AFTER_SECONDS} seconds.`;

/** The error's message and code (and its cause's), for a log line without a stack. */
function errorSummary(err: unknown): Record<string, unknown> {
  const e = err as { message?: unknown; code?: unknown; cause?: { message?: unknown; code?: unknown } } | null;
  const cause = e?.cause && typeof e.cause === 'object' ? { message: String(e.cause.message ?? ''), code: e.cause.code } : undefined;
  return { message: String(e?.message ?? err), code: e?.code, ...(cause ? { cause } : {}) };
}

export function notFoundHandler(req: Request, _res: Response, next: NextFunction): void {
  next(notFound(`Nothing at ${req.method} ${req.path}`));
}

/**
 * The last middleware. Client errors are answered with their message (and each bad field); a
 * database that is down or restarting with 503, Retry-After and `database_unavailable`; anything
 * else is logged with its stack and answered 500 with only the request id.
 */
export function errorHandler(render: RenderPage) {
  return async (err: unknown, req: Request, res: Response, _next: NextFunction): Promise<void> => {
    const log = res.locals.log;
    const requestId = res.locals.requestId;
    if (res.headersSent) {
      // A streamed response (CSV) failed half-way: the client must not take a cut file for a whole one.
      const code = (err as { code?: string } | null)?.code;
      if (code === 'ERR_STREAM_PREMATURE_CLOSE' || req.destroyed) log.warn({ err: { message: String((err as Error)?.message ?? err), code } }, 'client went away during the response');
      else if (isDatabaseUnavailable(err)) log.warn({ err: errorSummary(err), method: req.method, url: req.originalUrl }, 'database unavailable during the response; connection closed');
      else log.error({ err, method: req.method, url: req.originalUrl }, 'response failed after it started; connection closed');
      res.destroy();
      return;
    }
    // A download that failed before its first byte is answered as an error, not saved as a file.
    res.removeHeader('Content-Disposition');
    let clientError: ClientError | null = asClientError(err);
    if (!clientError && isDatabaseUnavailable(err)) {
      clientError = new ClientError(503, 'database_unavailable', DATABASE_UNAVAILABLE_MESSAGE);
      res.setHeader('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
      log.warn({ err: errorSummary(err), method: req.method, url: req.originalUrl }, 'database unavailable');
    }
    const status = clientError?.status ?? 500;
    if (!clientError) log.error({ err, method: req.method, url: req.originalUrl }, 'unexpected error');
    else if (status !== 404 && status !== 503) log.info({ status, code: clientError.code, errors: clientError.errors.length ? listSample(clientError.errors) : undefined }, clientError.message);

    const code = clientError?.code ?? 'internal_error';
    const message = clientError?.message ?? `Internal error; quote request id ${requestId} when reporting it.`;
    const errors = clientError?.errors ?? [];
    if (wantsJson(req)) {
      res.status(status).json({ code, message, ...(errors.length ? { errors } : {}), request_id: requestId });
      return;
    }
    try {
      const reportName = res.locals.reportName as string | undefined;
      await render(req, res, 'pages/error', {
        pageTitle: TITLES[status] ?? 'Error',
        message: status === 400 && errors.length ? 'The page could not be shown with these parameters:' : message,
        // On a page, the parameter as the address bar shows it (the JSON keeps `query.` / `body.`).
        errors: errors.map((e) => ({ ...e, field: e.field.replace(/^(query|body)\./, '') })),
        resetHref: status === 400 && reportName ? reportUrls(reportName).html : undefined,
      }, { status, currentReport: reportName ?? null });
    } catch (renderError) {
      log.error({ err: renderError }, 'error page could not be rendered');
      res.status(status).type('text').send(`${message} (request id ${requestId})`);
    }
  };
}
