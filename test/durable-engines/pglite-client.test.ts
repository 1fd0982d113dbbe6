/**
 * The embedded engine's SqlClient sends each statement to PGlite in one protocol round trip (parse,
 * bind, describe, execute, sync together, with the parameter types of a text described once). It must
 * answer exactly what `PGlite.query` answers on the same database: the same rows and types for hostile
 * values (or the same refusal), the same affected-row counts, the same errors, and parameter types
 * that stay right when the cache is full and a text comes back. One in-memory PGlite serves both.
 */
import { fc, it as fcIt } from "@fast-check/vitest"
import * as pgliteModule from "@electric-sql/pglite"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { preparedStatements } from "../../src/durable/engines/pglite-client.ts"

let pglite: pgliteModule.PGlite
let ours: ReturnType<typeof preparedStatements>

beforeAll(async () => {
  pglite = new pgliteModule.PGlite("memory://")
  await pglite.waitReady
  ours = preparedStatements(pglite, pgliteModule)
  await pglite.query("create table t (id serial primary key, s text, n float8, i int8, b boolean, j jsonb, at timestamptz, bytes bytea)")
}, 180_000)
afterAll(() => pglite?.close())

const withoutId = ({ id: _, ...row }: Record<string, unknown>) => row
const insert = "insert into t (s, n, i, b, j, at, bytes) values ($1, $2, $3, $4, $5, $6, $7) returning *"
const outcome = (p: Promise<{ rows: ReadonlyArray<unknown>; affectedRows?: number }>) =>
  p.then((r) => ({ rows: r.rows.map((row) => withoutId(row as Record<string, unknown>)), affectedRows: r.affectedRows }), (e: { code?: string; message?: string }) => ({ code: e.code, message: e.message }))

describe("pgliteClient's statements: one round trip each, the answers of PGlite.query", () => {
  fcIt.prop([
    fc.option(fc.string({ unit: "grapheme" }).map((s) => s.replace(/\0/g, "")), { nil: null }),
    fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), { nil: null }),
    fc.option(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), { nil: null }),
    fc.option(fc.boolean(), { nil: null }),
    fc.option(fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v).replace(/\\u0000/g, ""))), { nil: null }),
    fc.option(fc.date({ min: new Date("1900-01-01"), max: new Date("2200-01-01"), noInvalidDate: true }), { nil: null }),
    fc.option(fc.uint8Array({ maxLength: 64 }), { nil: null })
  ], { numRuns: 80 })("hostile values come back as PGlite.query gives them, or are refused alike", async (...params) => {
    // A string is sent as the column's text, as PGlite.query sends it: "" is not JSON, and both refuse it.
    const theirs = await outcome(pglite.query(insert, params))
    expect(await outcome(ours(insert, params, "object"))).toEqual(theirs)
  })

  it("answers rows as arrays, counts affected rows, runs a statement without parameters", async () => {
    // Values the property above cannot have inserted (it draws any string: "x" among them).
    await ours("insert into t (s) values ('rows-as-arrays x'), ('rows-as-arrays y')", [], "object")
    expect((await ours("select s from t where s like 'rows-as-arrays %' order by s", [], "array")).rows).toEqual([["rows-as-arrays x"], ["rows-as-arrays y"]])
    const updated = await ours("update t set n = 1 where s in ($1, $2)", ["rows-as-arrays x", "rows-as-arrays y"], "object")
    expect(updated.affectedRows).toBe((await pglite.query("update t set n = 1 where s in ($1, $2)", ["rows-as-arrays x", "rows-as-arrays y"])).affectedRows)
    expect(updated.affectedRows).toBe(2)
  })

  it("keeps a text's parameter types right through a full cache (texts with changing literals)", async () => {
    for (let k = 0; k < 600; k++) expect((await ours(`select $1::int8 + ${k} as v`, [k], "object")).rows).toEqual([{ v: 2 * k }])
    expect((await ours("select $1::int8 + 0 as v", [41n], "object")).rows).toEqual([{ v: 41 }])
    const at = (await ours<{ at: Date }>("select $1::timestamptz as at", [new Date(0)], "object")).rows[0]!.at
    expect(at.getTime()).toBe(0)
  })

  it("runs statements one at a time even when callers do not wait (a caller interrupted mid-statement)", async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, k) => ours(`select $1::int as v, ${k} as k`, [k], "object")))
    expect(answers.map((a) => a.rows)).toEqual(Array.from({ length: 20 }, (_, k) => [{ v: k, k }]))
  })

  it("fails as PGlite.query fails (code, message), and the session goes on", async () => {
    await pglite.query("create table u (k text primary key)")
    await ours("insert into u values ($1)", ["a"], "object")
    for (const [sql, params] of [["insert into u values ($1)", ["a"]], ["selec 1", []], ["select $1::int", ["x"]]] as const) {
      const theirs = await outcome(pglite.query(sql, [...params]))
      expect(theirs).toHaveProperty("code")
      expect(await outcome(ours(sql, params, "object"))).toEqual(theirs)
    }
    expect((await ours("select 1 as one", [], "object")).rows).toEqual([{ one: 1 }])
  })
})

describe("pgliteClient's statements with parameters are prepared once per text", () => {
  const preparedCount = async (text: string) =>
    Number((await pglite.query<{ n: number }>("select count(*)::int as n from pg_prepared_statements where statement = $1", [text])).rows[0]!.n)
  const allPrepared = async () => Number((await pglite.query<{ n: number }>("select count(*)::int as n from pg_prepared_statements")).rows[0]!.n)

  it("a text with parameters is prepared under one name and reused; one without is not kept", async () => {
    const text = "select $1::int * 3 as v"
    for (let k = 0; k < 5; k++) expect((await ours(text, [k], "object")).rows).toEqual([{ v: 3 * k }])
    expect(await preparedCount(text)).toBe(1)
    await ours("select 7 as seven", [], "object")
    expect(await preparedCount("select 7 as seven")).toBe(0)
  })

  it("a prepared text that fails (a unique violation) stays prepared, once, and runs again", async () => {
    await pglite.query("create table once_only (k text primary key)")
    const text = "insert into once_only values ($1)"
    await ours(text, ["a"], "object")
    for (let k = 0; k < 5; k++) expect(await outcome(ours(text, ["a"], "object"))).toMatchObject({ code: "23505" })
    await ours(text, ["b"], "object")
    expect(await preparedCount(text)).toBe(1)
  })

  it("a table changed under a prepared text: the text is prepared afresh and answers the new columns", async () => {
    await pglite.query("create table widening (a int)")
    await pglite.query("insert into widening values (1)")
    const text = "select * from widening where a = $1"
    expect((await ours(text, [1], "object")).rows).toEqual([{ a: 1 }])
    await pglite.query("alter table widening add column b text default 'x'")
    expect((await ours(text, [1], "object")).rows).toEqual([{ a: 1, b: "x" }])
  })

  it("prepares at most 1,000 texts in a session; texts after that still run, parsed each time", async () => {
    for (let k = 0; k < 1_100; k++) expect((await ours(`select $1::int + ${k} as v -- distinct text`, [1], "object")).rows).toEqual([{ v: 1 + k }])
    expect(await allPrepared()).toBeLessThanOrEqual(1_000)
    expect((await ours("select $1::int + 1099 as v -- distinct text", [1], "object")).rows).toEqual([{ v: 1100 }])
  }, 120_000)
})

describe("pgliteClient on files: no sync to wait for", () => {
  it("asks PGlite to sync its file system after a statement only when told to (on files on Node the sync is a no-op: PGlite writes through)", async () => {
    const asked: Array<boolean> = []
    const original = pglite.execProtocol.bind(pglite)
    const spy = Object.assign(Object.create(pglite) as pgliteModule.PGlite, {
      execProtocol: (message: Uint8Array, options?: { readonly syncToFs?: boolean }) => {
        asked.push(options?.syncToFs ?? true)
        return original(message, options)
      }
    })
    const onFiles = preparedStatements(spy, pgliteModule, { syncToFs: false })
    const elsewhere = preparedStatements(spy, pgliteModule)
    await onFiles("select 1 as n", [], "object")
    await onFiles.pipeline([{ text: "select 1 as one", params: [] }])
    expect(asked.filter((sync) => sync)).toEqual([])
    asked.length = 0
    await elsewhere.pipeline([{ text: "select 1 as one", params: [] }])
    expect(asked).toEqual([true])
  })
})
