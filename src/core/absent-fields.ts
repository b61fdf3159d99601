// What counts as a field left out of a request body: one that is absent, or one sent as null. SDKs that serialise
// every property of their objects send null for those their caller never set, and mean nothing by it.
import { isPlainObject } from './issue-text.js';

/**
 * The object with its null-valued fields removed, in nested objects too (arrays are left as they are: their elements
 * are values, not fields, and each kind of element is read by its own schema). Anything that is not an object is
 * returned unchanged.
 */
export function withoutNullFields<T>(value: T): T {
  if (!isPlainObject(value)) return value;
  const kept = Object.entries(value).flatMap(([key, field]) => (field === null ? [] : [[key, withoutNullFields(field)]]));
  return Object.fromEntries(kept) as T;
}
