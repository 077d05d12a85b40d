/** A minimal cookie jar: name=value pairs from Set-Cookie, dropping cleared ones. */
export class Jar {
  readonly cookies = new Map<string, string>();
  take(setCookie: string | string[] | undefined): void {
    for (const line of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): Record<string, string> {
    return this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
  }
  names(): string[] {
    return [...this.cookies.keys()];
  }
  copy(): Jar {
    const jar = new Jar();
    for (const [k, v] of this.cookies) jar.cookies.set(k, v);
    return jar;
  }
}

export interface SetCookie {
  name: string;
  value: string;
  /** Attribute names in lower case; flags (Secure, HttpOnly) are `true`. */
  attributes: Record<string, string | true>;
}

/** The Set-Cookie lines of an answer, parsed (attribute names lower-cased). */
export function setCookies(header: string | string[] | undefined): SetCookie[] {
  return (Array.isArray(header) ? header : header ? [header] : []).map((line) => {
    const [pair = '', ...rest] = line.split(';');
    const eq = pair.indexOf('=');
    const attributes: Record<string, string | true> = {};
    for (const part of rest) {
      const at = part.indexOf('=');
      const key = (at < 0 ? part : part.slice(0, at)).trim().toLowerCase();
      if (key) attributes[key] = at < 0 ? true : part.slice(at + 1).trim();
    }
    return { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim(), attributes };
  });
}
