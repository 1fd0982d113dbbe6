/** Key order changed at every level of a JSON value, as PostgreSQL `jsonb` (shorter keys first, then bytewise) does. */
export const reorderKeys = (value: unknown): any => {
  if (Array.isArray(value)) return value.map(reorderKeys)
  if (value === null || typeof value !== "object") return value
  const keys = Object.keys(value).sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0))
  return Object.fromEntries(keys.map((k) => [k, reorderKeys((value as Record<string, unknown>)[k])]))
}
