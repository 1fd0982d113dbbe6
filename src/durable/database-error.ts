/**
 * The database's own words for a failed statement. Effect's SQL errors say "PgConnection: Query
 * failed"; what PostgreSQL said (its message, SQLSTATE code, detail) is in the cause chain. Store and
 * engine errors carry it, so an operator sees "duplicate key value violates unique constraint …",
 * not "Query failed".
 */

/** `error`'s message followed by the deepest database message found under it (with its SQLSTATE). */
export const databaseMessage = (error: unknown): string => {
  const outer = error instanceof Error ? error.message : String(error)
  const seen = new Set<unknown>()
  let current: unknown = error
  let found: { readonly message: string; readonly code?: string; readonly detail?: string } | undefined
  while (typeof current === "object" && current !== null && !seen.has(current)) {
    seen.add(current)
    const c = current as { readonly message?: unknown; readonly code?: unknown; readonly detail?: unknown; readonly reason?: unknown; readonly cause?: unknown }
    if (current !== error && typeof c.message === "string" && c.message !== "") {
      found = {
        message: c.message,
        ...(typeof c.code === "string" ? { code: c.code } : {}),
        ...(typeof c.detail === "string" && c.detail !== "" ? { detail: c.detail } : {})
      }
    }
    current = c.reason ?? c.cause
  }
  if (found === undefined) return outer
  const message = outer.includes(found.message) ? outer : `${outer}: ${found.message}`
  const extra = [found.code === undefined ? undefined : `SQLSTATE ${found.code}`, found.detail].filter((x) => x !== undefined)
  return extra.length > 0 && !message.includes("SQLSTATE") ? `${message} (${extra.join("; ")})` : message
}
