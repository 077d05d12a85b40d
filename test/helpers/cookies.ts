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
