/**
 * `databaseMessage`: the database's own words under Effect's "Query failed", for any error shape
 * (cycles, non-errors, missing fields) without throwing.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { databaseMessage } from "../../src/durable/database-error.ts"

describe("databaseMessage", () => {
  it("adds PostgreSQL's message, SQLSTATE and detail found under the outer error", () => {
    const pg = Object.assign(new Error("duplicate key value violates unique constraint \"pg_type_typname_nsp_index\""), { code: "23505", detail: "Key exists." })
    const error = Object.assign(new Error("PgConnection: Query failed"), { reason: { message: "PgConnection: Query failed", cause: pg } })
    expect(databaseMessage(error)).toBe(
      "PgConnection: Query failed: duplicate key value violates unique constraint \"pg_type_typname_nsp_index\" (SQLSTATE 23505; Key exists.)"
    )
  })

  it("never throws, and always keeps the outer message, for hostile shapes (cycles included)", () => {
    const leaf = fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.constant(undefined))
    const node = fc.letrec((tie) => ({
      err: fc.record({ message: leaf, code: leaf, detail: leaf, reason: fc.oneof(leaf, tie("err")), cause: fc.oneof(leaf, tie("err")) }, { requiredKeys: [] })
    })).err
    fc.assert(fc.property(fc.string(), node, fc.boolean(), (outer, inner, cyclic) => {
      const error = Object.assign(new Error(outer), { cause: inner })
      if (cyclic && typeof inner === "object" && inner !== null) (inner as { cause?: unknown }).cause = error
      const message = databaseMessage(error)
      expect(typeof message).toBe("string")
      expect(message.startsWith(outer)).toBe(true)
    }))
    expect(databaseMessage("plain")).toBe("plain")
    expect(databaseMessage(undefined)).toBe("undefined")
  })
})
