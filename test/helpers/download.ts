import { request } from 'undici';

/** The whole body of a GET as far as it came, and the error that cut the transfer (null when it ended cleanly). */
export async function downloadWhole(url: string): Promise<{ status: number; text: string; error: unknown }> {
  const res = await request(url);
  const parts: Buffer[] = [];
  let error: unknown = null;
  try {
    for await (const chunk of res.body) parts.push(chunk as Buffer);
  } catch (err) {
    error = err;
  }
  return { status: res.statusCode, text: Buffer.concat(parts).toString('utf8'), error };
}
