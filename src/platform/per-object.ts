/**
 * `make(key)` made once per object and kept as long as the object lives (a WeakMap). What a
 * request derives from its token's claims is kept this way: a verified token's claims are one
 * object, kept by the token cache (platform/jwt.ts) and never changed, that arrives with every request
 * the token makes. What `make` returns is shared by every caller: never to be changed.
 */
export function perObject<K extends object, V>(make: (key: K) => V): (key: K) => V {
  const kept = new WeakMap<K, V>();
  return (key) => {
    let value = kept.get(key);
    if (value === undefined) {
      value = make(key);
      kept.set(key, value);
    }
    return value;
  };
}
