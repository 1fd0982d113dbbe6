/**
 * Agent memory: a key-value store the model reads and writes through three tools, `memory_read`,
 * `memory_write` and `memory_search`, that `.memory(store?)` adds to every skill's allowlist.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { fromMaybeEffect, type MaybeEffect } from "../internal/from-maybe-effect.ts"
import { type AnyTool, tool } from "./tool.ts"

/** One stored entry. */
export interface MemoryEntry {
  readonly key: string
  readonly value: string
}

/**
 * Where an agent's memory lives. Methods may answer synchronously, with a Promise or with an Effect, so
 * a database or a vector store fits as well as a Map; the services its Effects require (`R`) become
 * the agent's requirements.
 */
export interface MemoryStore<R = never> {
  read(key: string): MaybeEffect<string | undefined, R>
  write(key: string, value: string): MaybeEffect<void, R>
  /** Entries relevant to `query`, best first, at most `limit`. */
  search(query: string, limit: number): MaybeEffect<ReadonlyArray<MemoryEntry>, R>
}

/** The names of the memory tools; reserved, so no tool may be registered under them. */
export const memoryToolNames = ["memory_read", "memory_write", "memory_search"] as const

/**
 * A memory store in a Map: search ranks entries by how many of the query's words appear in their key
 * or value. Each call makes a new, empty store.
 *
 * @example
 * ```ts
 * const assistant = agent("assistant").model(model).memory(inMemoryStore())
 * ```
 */
export const inMemoryStore = (): MemoryStore => {
  const entries = new Map<string, string>()
  return {
    read: (key) => entries.get(key),
    write: (key, value) => {
      entries.set(key, value)
    },
    search: (query, limit) => {
      const words = query.toLowerCase().split(/\W+/).filter((w) => w.length > 1)
      return [...entries]
        .map(([key, value]) => {
          const text = `${key} ${value}`.toLowerCase()
          return { entry: { key, value }, hits: words.filter((w) => text.includes(w)).length }
        })
        .filter(({ hits }) => hits > 0)
        .sort((a, b) => b.hits - a.hits)
        .slice(0, limit)
        .map(({ entry }) => entry)
    }
  }
}

/** The three memory tools over `store`. */
export const memoryTools = (store: MemoryStore<any>): ReadonlyArray<AnyTool> => [
  tool("memory_read", {
    description: "Read a value you stored earlier under a key. Answers null when nothing is stored there.",
    args: Schema.Struct({ key: Schema.NonEmptyString.annotate({ description: "the key" }) }),
    effect: "readOnly",
    run: ({ key }) => fromMaybeEffect(() => store.read(key)).pipe(Effect.map((value) => value ?? null))
  }),
  tool("memory_write", {
    description: "Store a value under a key, replacing what was there, to remember it in later conversations.",
    args: Schema.Struct({
      key: Schema.NonEmptyString.annotate({ description: "the key" }),
      value: Schema.String.annotate({ description: "the text to remember" })
    }),
    // Writing the same value under the same key twice leaves the store as writing it once.
    effect: "idempotent",
    run: ({ key, value }) => fromMaybeEffect(() => store.write(key, value)).pipe(Effect.as("stored"))
  }),
  tool("memory_search", {
    description: "Search stored memories by keywords.",
    args: Schema.Struct({
      query: Schema.String.annotate({ description: "keywords" }),
      limit: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 50 })).annotate({ description: "at most this many results, default 5" }))
    }),
    effect: "readOnly",
    run: ({ query, limit }) => fromMaybeEffect(() => store.search(query, limit ?? 5))
  })
]
