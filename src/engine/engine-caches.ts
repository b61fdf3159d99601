// What an engine keeps in memory between calls, held by the engine instance (two engines in one process never share
// an entry): each cache is a map with a bound, its oldest entries dropped first.
export class EngineCaches {
  private readonly maps = new Map<string, Map<unknown, unknown>>();

  /** The cache called `name`, made on first use. */
  map<K, V>(name: string): Map<K, V> {
    let map = this.maps.get(name);
    if (!map) {
      map = new Map();
      this.maps.set(name, map);
    }
    return map as Map<K, V>;
  }

  /** The entry for `key` in cache `name`, made by `make` when missing; past `limit` entries the oldest goes. */
  remember<K, V>(name: string, key: K, limit: number, make: () => V): V {
    const map = this.map<K, V>(name);
    if (map.has(key)) return map.get(key)!;
    const value = make();
    map.set(key, value);
    if (map.size > limit) map.delete(map.keys().next().value!);
    // A failed promise is not kept: the next call tries again.
    if (value instanceof Promise) value.catch(() => map.get(key) === value && map.delete(key));
    return value;
  }
}
