import type { NextFunction, Request, Response } from 'express';
import { listSample } from '../logger.js';
import { reportUrls } from '../present/urls.js';
import { asClientError, notFound, type ClientError } from './errors.js';
import type { RenderPage } from './render.js';

/** API and CSV routes (and clients that ask for JSON) get JSON errors; pages get an HTML page. */
function wantsJson(req: Request): boolean {
  return req.path.startsWith('/api/') || req.accepts(['html', 'json']) === 'json';
}

const TITLES: Record<number, string> = { 400: 'Invalid parameters', 403: 'Forbidden', 404: 'Not found', 405: 'Method not allowed', 500: 'Something went wrong' };

export function notFoundHandler(req: Request, _res: Response, next: NextFunction): void {
  next(notFound(`Nothing at ${req.method} ${req.path}`));
}

/**
 * The last middleware. Client errors are answered with their message (and each bad field);
 * anything else is logged with its stack and answered 500 with only the request id.
 */
export function errorHandler(render: RenderPage) {
  return async (err: unknown, req: Request, res: Response, _next: NextFunction): Promise<void> => {
    const log = res.locals.log;
    const requestId = res.locals.requestId;
    if (res.headersSent) {
      // A streamed response (CSV) failed half-way: the client must not take a cut file for a whole one.
      const code = (err as { code?: string } | null)?.code;
      if (code === 'ERR_STREAM_PREMATURE_CLOSE' || req.destroyed) log.warn({ err: { message: String((err as Error)?.message ?? err), code } }, 'client went away during the response');
      else log.error({ err, method: req.method, url: req.originalUrl }, 'response failed after it started; connection closed');
      res.destroy();
      return;
    }
    const clientError: ClientError | null = asClientError(err);
    const status = clientError?.status ?? 500;
    if (!clientError) log.error({ err, method: req.method, url: req.originalUrl }, 'unexpected error');
    else if (status !== 404) log.info({ status, code: clientError.code, errors: clientError.errors.length ? listSample(clientError.errors) : undefined }, clientError.message);

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
