/** Collects the bound parameters of a statement being built; `add` returns the value's placeholder. */
export class Binds {
  readonly values: unknown[] = [];

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}
