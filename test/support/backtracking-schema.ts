/**
 * A recursive union whose members both read `next` (the recursion) before the field that tells them
 * apart: Effect's decoder tries 2^depth members on a value `depth` levels deep. For the tests of the
 * cost guard (`src/internal/decode-cost.ts`) at each border it stands at.
 */
import { Schema } from "effect"

/** A link of the chain: `a` or `b`, and the next link. */
export interface Link {
  readonly next?: Link | undefined
  readonly a?: string
  readonly b?: string
}

/** The chain's Effect Schema: `{ next?: Link, a: string } | { next?: Link, b: string }`. */
export const Link: Schema.Codec<Link> = Schema.Union([
  Schema.Struct({ next: Schema.optional(Schema.suspend((): Schema.Codec<Link> => Link)), a: Schema.String }),
  Schema.Struct({ next: Schema.optional(Schema.suspend((): Schema.Codec<Link> => Link)), b: Schema.String })
])

/** A chain `depth` links deep, every link a `b` (so every level tries the `a` member first, in full). */
export const chainOf = (depth: number): Link => {
  let link: Link = { b: "x" }
  for (let i = 0; i < depth; i++) link = { next: link, b: "x" }
  return link
}
