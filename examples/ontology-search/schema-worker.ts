/**
 * Where `investigate_schema` queries run: a worker thread holding its own Oxigraph store with the
 * shapes only. Oxigraph evaluates a query in one synchronous WebAssembly call, which nothing in the
 * calling thread can interrupt; in a worker, a query that outlives its time limit is stopped by
 * terminating the worker (a new one starts on the next query). The data graph is not even loaded there.
 */
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
import { shapesTurtle } from "./store.ts"

/** The answer of one query: binding rows as strings, or the error the store raised. */
export type WorkerAnswer = { readonly rows: ReadonlyArray<Record<string, string>> } | { readonly error: string }

const oxigraphPath = createRequire(import.meta.url).resolve("oxigraph")

// Plain JavaScript, so the worker needs no TypeScript loader.
const workerSource = `
const { parentPort, workerData } = require("node:worker_threads")
const ox = require(workerData.oxigraph)
const store = new ox.Store()
store.load(workerData.shapes, { format: "text/turtle" })
parentPort.on("message", ({ id, query, maxRows }) => {
  try {
    const rows = []
    for (const b of store.query(query)) {
      rows.push(Object.fromEntries([...b].map(([k, v]) => [k, v.value])))
      if (rows.length >= maxRows) break
    }
    parentPort.postMessage({ id, rows })
  } catch (e) {
    parentPort.postMessage({ id, error: String(e && e.message || e) })
  }
})`

let worker: Worker | undefined
let next = 0

const start = (): Worker => {
  const w = new Worker(workerSource, { eval: true, workerData: { oxigraph: oxigraphPath, shapes: shapesTurtle } })
  w.unref()
  w.on("error", () => { if (worker === w) worker = undefined })
  return w
}

/**
 * Runs a (checked) SELECT on the shapes in the worker, giving up after `timeoutMs`.
 *
 * @example
 * ```ts
 * await runInSchemaWorker("SELECT ?s WHERE { ?s ?p ?o } LIMIT 5", { maxRows: 5, timeoutMs: 2000 })
 * ```
 */
export const runInSchemaWorker = (query: string, options: { readonly maxRows: number; readonly timeoutMs: number }): Promise<WorkerAnswer> => {
  const w = (worker ??= start())
  const id = next++
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      w.off("message", onMessage)
      if (worker === w) worker = undefined
      void w.terminate()
      resolve({ error: `timed out after ${options.timeoutMs} ms` })
    }, options.timeoutMs)
    const onMessage = (m: { id: number } & WorkerAnswer) => {
      if (m.id !== id) return
      clearTimeout(timer)
      w.off("message", onMessage)
      resolve(m)
    }
    w.on("message", onMessage)
    w.postMessage({ id, query, maxRows: options.maxRows })
  })
}
