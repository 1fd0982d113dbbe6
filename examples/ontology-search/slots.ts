/**
 * The `submit_slots` contract (seed 000, after its 2026-05-26 audit): the model fills typed slots
 * instead of writing SPARQL. Filters and ranges are keyed by the SHACL leaf local name (country,
 * region and license are ordinary filters); `references` binds at most one cross-domain join;
 * `gaps` lists what the model could not map. `referencesExtra` receives any further references a
 * model nominates, so the corrections can report them as gaps instead of losing them silently.
 */
import { Schema } from "effect"

const Range = Schema.Struct({
  min: Schema.optional(Schema.Finite),
  max: Schema.optional(Schema.Finite)
})

/** An unresolvable term, with why, and suggestions from the real vocabulary. */
export const Gap = Schema.Struct({
  term: Schema.String,
  reason: Schema.String,
  suggestions: Schema.optional(Schema.Array(Schema.String))
})
export type Gap = typeof Gap.Type

/** The slots proper. */
export const Slots = Schema.Struct({
  domains: Schema.Array(Schema.String).annotate({ description: "Asset types to search (domain labels from the shapes: scenario, hdmap, recording)" }),
  filters: Schema.Record(Schema.String, Schema.Union([Schema.String, Schema.Array(Schema.String)])).annotate({
    description: "Enumeration filters keyed by the SHACL leaf local name (any sh:in property, e.g. roadTypes, country, region, license); values from its sh:in list"
  }),
  ranges: Schema.Record(Schema.String, Range).annotate({ description: "Numeric ranges keyed by the leaf local name of an xsd:integer or xsd:decimal property" }),
  references: Schema.optional(
    Schema.Union([Schema.Struct({ domain: Schema.String }), Schema.Array(Schema.Struct({ domain: Schema.String }))])
  ).annotate({ description: "One cross-domain JOIN: assets that reference an asset of this domain (only one is used)" })
})
export type Slots = typeof Slots.Type

/**
 * What `submit_slots` takes: the slots, a human-readable interpretation, and the gaps.
 *
 * @example
 * ```ts
 * const s: Submission = { slots: { domains: ["hdmap"], filters: { roadTypes: "motorway" }, ranges: {} }, interpretation: "motorway maps", gaps: [] }
 * ```
 */
export const Submission = Schema.Struct({
  slots: Slots,
  interpretation: Schema.String.annotate({ description: "Human-readable summary of what is searched" }),
  gaps: Schema.Array(Gap).annotate({ description: "Terms of the question that no slot can express" })
})
export type Submission = typeof Submission.Type
