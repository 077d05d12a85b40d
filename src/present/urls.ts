/** A query string as Express's simple parser gives it: each value a string, or an array when repeated. */
export type RawQuery = Record<string, string | string[]>;

/** path?query, keeping the order of the parameters and repeated values; empty values dropped. */
export function urlWith(path: string, query: RawQuery): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    for (const v of Array.isArray(value) ? value : [value]) if (v !== '') search.append(key, v);
  }
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}

/** Where a dataset export's metadata is served (reports with datasetMetadata). */
export function reportMetadataUrl(name: string): string {
  return `/api/reports/${encodeURIComponent(name)}/metadata`;
}

export function reportUrls(name: string) {
  const slug = encodeURIComponent(name);
  return {
    html: `/reports/${slug}`,
    json: `/api/reports/${slug}`,
    csv: `/api/reports/${slug}.csv`,
  };
}
