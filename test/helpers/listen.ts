/**
 * Starts an HTTP server on a free loopback port.
 *
 *   const { url, close } = await listenOnFreePort(app);   // an Express app or any request listener
 *   const { url, port, server, close } = await listenOnFreePort(createServer(handler));
 *
 * close() drops every connection (keep-alive ones too) and resolves when the server is closed;
 * closing a server that is no longer running (e.g. one that shutdownService closed) is not an error.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  server: Server;
  /** http://127.0.0.1:<port>, no trailing slash */
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface ListenOptions {
  /** This port instead of a free one (e.g. to bring a server back where it was). */
  port?: number;
  /** Server.keepAliveTimeout in ms (Node's default is 5 s). */
  keepAliveTimeout?: number;
}

export async function listenOnFreePort(target: Server | RequestListener, options: ListenOptions = {}): Promise<Listening> {
  const server = typeof target === 'function' ? createServer(target) : target;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  if (options.keepAliveTimeout !== undefined) server.keepAliveTimeout = options.keepAliveTimeout;
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err && (err as NodeJS.ErrnoException).code !== 'ERR_SERVER_NOT_RUNNING' ? reject(err) : resolve()));
      }),
  };
}
