/**
 * The rendered bodies of report pages (what the layout wraps), kept per cached report result:
 * while the report cache serves the same result object, requests with the same query and the
 * same view of the page (data state, whether the collect button shows, the user's permissions)
 * get the same body, so only the layout (navigation, banners, CSRF token, user name) is rendered
 * per request. A new data version or an expired result is a new object, and with it new bodies;
 * the old ones go with the old result (weakly held).
 */

/**
 * Bodies kept per result: the views of one result (roles, data states, column choices, parameter
 * order) are few; a body is about the size of the result itself, so this bounds their memory.
 */
const MAX_BODIES_PER_RESULT = 8;

export interface PageBody {
  /**
   * The body's HTML as UTF-8, encoded once: on Node 20 encoding a report page of ~100 KB costs
   * about a millisecond, most of what serving a kept page costs.
   */
  html: Buffer;
  /** The page's data the layout reads (its title, whether it loads the chart scripts). */
  layoutData: Record<string, unknown>;
}

export class PageBodies {
  private readonly byOwner = new WeakMap<object, Map<string, Promise<PageBody>>>();
  private readonly ids = new WeakMap<object, number>();
  private nextId = 1;

  /**
   * The body for `key` among those of `owners` (every object it was made from whose identity
   * stands for its content: the cached result, its cached filters), made by `make` when missing.
   * Concurrent requests share one rendering; a failed one is not kept.
   */
  get(owners: readonly [object, ...Array<object | null>], key: string, make: () => Promise<PageBody>): Promise<PageBody> {
    const [owner, ...others] = owners;
    const fullKey = `${others.map((o) => (o ? this.idOf(o) : 0)).join(',')}|${key}`;
    let bodies = this.byOwner.get(owner);
    if (!bodies) this.byOwner.set(owner, (bodies = new Map()));
    const kept = bodies.get(fullKey);
    if (kept) return kept;
    const made = make();
    bodies.set(fullKey, made);
    if (bodies.size > MAX_BODIES_PER_RESULT) bodies.delete(bodies.keys().next().value!);
    const store = bodies;
    made.catch(() => {
      if (store.get(fullKey) === made) store.delete(fullKey);
    });
    return made;
  }

  private idOf(o: object): number {
    let id = this.ids.get(o);
    if (id === undefined) this.ids.set(o, (id = this.nextId++));
    return id;
  }
}
