/**
 * The embedded engine's SqlClient sends each statement to PGlite in one protocol round trip (parse,
 * bind, describe, execute, sync together, with the parameter types of a text described once). It must
 * answer exactly what `PGlite.query` answers: the same rows and types for hostile values, the same
 * affected-row counts, the same tagged errors, and parameter types that stay right when the cache is
 * full and a text comes back.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fc, it as fcIt } from "@fast-check/vitest"
import { PGlite } from "@electric-sql/pglite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pgliteClient } from "../../src/durable/engines/pglite-client.ts"

const dir = mkdtempSync(join(tmpdir(), "pglite-client-"))
let reference: PGlite
let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
const withSql = <A, E>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    return yield* f(yield* SqlClient.SqlClient)
  })
const run = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => runtime.runPromise(withSql(f))

beforeAll(async () => {
  reference = new PGlite("memory://")
  runtime = ManagedRuntime.make(Layer.orDie(pgliteClient({ dataDir: join(dir, "ours") })))
  const ddl = "create table t (id serial primary key, s text, n float8, i int8, b boolean, j jsonb, at timestamptz, bytes bytea)"
  await reference.query(ddl)
  await run((sql) => sql.unsafe(ddl))
}, 180_000)
afterAll(async () => {
  await runtime?.dispose()
  await reference?.close()
  rmSync(dir, { recursive: true, force: true })
})

const withoutId = ({ id: _, ...row }: Record<string, unknown>) => row
const insert = "insert into t (s, n, i, b, j, at, bytes) values ($1, $2, $3, $4, $5, $6, $7) returning *"

describe("pgliteClient: one round trip per statement, the answers of PGlite.query", () => {
  fcIt.prop([
    fc.option(fc.string({ unit: "grapheme" }).map((s) => s.replace(/\0/g, "")), { nil: null }),
    fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), { nil: null }),
    fc.option(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), { nil: null }),
    fc.option(fc.boolean(), { nil: null }),
    fc.option(fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v).replace(/\\u0000/g, ""))), { nil: null }),
    fc.option(fc.date({ min: new Date("1900-01-01"), max: new Date("2200-01-01"), noInvalidDate: true }), { nil: null }),
    fc.option(fc.uint8Array({ maxLength: 64 }), { nil: null })
  ], { numRuns: 60 })("hostile values come back as PGlite.query gives them", async (s, n, i, b, j, at, bytes) => {
    const params = [s, n, i, b, j, at, bytes]
    // A string is sent as the column's text (PGlite.query does the same): "" is not JSON, and both must refuse it alike.
    const expected = await reference.query<Record<string, unknown>>(insert, params).then(
      (r) => ({ row: withoutId(r.rows[0]!) }),
      (e: { code?: string }) => ({ code: e.code })
    )
    const ours = await runtime.runPromise(Effect.result(withSql((sql) => sql.unsafe<Record<string, unknown>>(insert, params))))
    expect(ours._tag === "Success" ? { row: withoutId(ours.success[0]!) } : { code: (ours.failure.reason as { cause?: { code?: string } }).cause?.code }).toEqual(expected)
  })

  it("answers rows as arrays, counts affected rows, and handles a statement without parameters", async () => {
    await run((sql) => sql.unsafe("insert into t (s) values ('x'), ('y')"))
    const values = await run((sql) => sql.unsafe("select s from t where s in ('x', 'y') order by s").values)
    expect(values).toEqual([["x"], ["y"]])
    const raw = await run((sql) => sql.unsafe("update t set n = 1 where s in ($1, $2)", ["x", "y"]).raw) as { affectedRows: number }
    expect(raw.affectedRows).toBe(2)
  })

  it("keeps a text's parameter types right through a full cache (texts with changing literals)", async () => {
    for (let k = 0; k < 600; k++) await run((sql) => sql.unsafe(`select $1::int8 + ${k} as v`, [k]))
    const [row] = await run((sql) => sql.unsafe<{ v: number }>("select $1::int8 + 0 as v", [41n]))
    expect(row!.v).toBe(41)
    const [later] = await run((sql) => sql.unsafe<{ at: Date }>("select $1::timestamptz as at", [new Date(0)]))
    expect(later!.at.getTime()).toBe(0)
  })

  it("fails with the tagged reason and the database's message, and the session goes on", async () => {
    await run((sql) => sql.unsafe("create table u (k text primary key)"))
    await run((sql) => sql.unsafe("insert into u values ($1)", ["a"]))
    const duplicate = await runtime.runPromise(Effect.flip(withSql((sql) => sql.unsafe("insert into u values ($1)", ["a"]))))
    expect(duplicate.reason._tag).toBe("UniqueViolation")
    const syntax = await runtime.runPromise(Effect.flip(withSql((sql) => sql.unsafe("selec 1"))))
    expect(syntax.reason._tag).toBe("SqlSyntaxError")
    expect(syntax.message + String((syntax.reason as { cause?: unknown }).cause)).toMatch(/syntax error/)
    const [row] = await run((sql) => sql.unsafe<{ one: number }>("select 1 as one"))
    expect(row!.one).toBe(1)
  })

  it("rolls a failed transaction back and commits a good one", async () => {
    await runtime.runPromise(Effect.ignore(withSql((sql) =>
      sql.withTransaction(Effect.andThen(sql.unsafe("insert into u values ('in-tx')"), sql.unsafe("insert into u values ('a')"))))))
    await run((sql) => sql.withTransaction(sql.unsafe("insert into u values ('committed')")))
    const keys = await run((sql) => sql.unsafe<{ k: string }>("select k from u order by k"))
    expect(keys.map((r) => r.k)).toEqual(["a", "committed"])
  })
})
