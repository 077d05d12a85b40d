/**
 * `compute` remembered for the last few thousand distinct inputs (all forgotten at once when
 * full, so memory stays bounded). For pure, costly per-value work over streams in which values
 * repeat: the same snapshot time or tag set on thousands of exported rows.
 */
export function boundedMemo<K, V>(compute: (key: K) => V, maxEntries = 4096): (key: K) => V {
  const known = new Map<K, V>();
  return (key) => {
    let value = known.get(key);
    if (value === undefined && !known.has(key)) {
      value = compute(key);
      if (known.size >= maxEntries) known.clear();
      known.set(key, value);
    }
    return value as V;
  };
}
