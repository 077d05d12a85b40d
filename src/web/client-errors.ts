/**
 * Requests Node's HTTP parser refuses before Express sees them (headers or URL over 16 KB, a
 * malformed request line). Node's default answer is a status line with an empty body, which a
 * browser shows as a blank page; this one says what was wrong and what to do.
 */
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../logger.js';

const ANSWERS: Record<string, { status: number; reason: string; text: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    reason: 'Request Header Fields Too Large',
    text: 'The request is too large: its URL and headers together exceed 16 KB. Remove some filters (or cookies for this site) and try again.',
  },
};
const DEFAULT_ANSWER = { status: 400, reason: 'Bad Request', text: 'The request could not be read: it is not valid HTTP.' };

export function answerClientErrors(server: Server, logger: Logger): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A connection reset or already half-closed socket has nobody left to answer.
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const answer = ANSWERS[error.code ?? ''] ?? DEFAULT_ANSWER;
    logger.info({ code: error.code, status: answer.status }, 'request refused by the HTTP parser');
    const body = `${answer.text}\n`;
    socket.end(
      `HTTP/1.1 ${answer.status} ${answer.reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
