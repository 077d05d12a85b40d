import { Client } from 'undici';

/**
 * The whole body of a GET as far as it came, and the error that cut the transfer (null when it
 * ended cleanly). On a connection of its own: a keep-alive socket left by an earlier request can
 * be closed by the server just as this request is sent on it (ECONNRESET before any answer).
 */
export async function downloadWhole(url: string): Promise<{ status: number; text: string; error: unknown }> {
  const target = new URL(url);
  const client = new Client(target.origin);
  try {
    const res = await client.request({ method: 'GET', path: `${target.pathname}${target.search}` });
    const parts: Buffer[] = [];
    let error: unknown = null;
    try {
      for await (const chunk of res.body) parts.push(chunk as Buffer);
    } catch (err) {
      error = err;
    }
    return { status: res.statusCode, text: Buffer.concat(parts).toString('utf8'), error };
  } finally {
    await client.destroy();
  }
}
