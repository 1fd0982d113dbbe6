/**
 * Strict decoding (`{ errors: "all", onExcessProperty: "error" }`) at the cost of a default one.
 *
 * Effect's struct parser has a fast path for the default options only; any other option (the excess-key
 * check above all) sends every struct of every value through a generator per struct. For a Schema
 * whose decoded form keeps the shape of its input (no transformation, declaration other than
 * `Schema.Json`, or recursion anywhere in it), "no excess key" can be checked on the result instead: the default decode keeps only
 * the keys the Schema knows, so an input key missing from the result is an excess key. The default
 * decode runs first; when it succeeds and the result kept every key of the input, it is the strict
 * decode's result too (the same candidates are tried in the same order, and a candidate that kept
 * every key has none the strict check refuses). Otherwise (a failure, a dropped key, any other Schema)
 * the strict decode runs and gives its own result and report. A property test compares both decoders
 * on hostile values (test/properties/strict-decode.property.test.ts).
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import { declaresPrototypeKey, detachPrototypes, withPlainPrototypes } from "./prototype-free.ts"

/** The options of every strict decode: every issue reported, an unknown key refused. */
export const strictOptions = { errors: "all", onExcessProperty: "error" } as const

/**
 * `Schema.decodeUnknownResult(codec)` under `strictOptions`, through the default decode when the
 * Schema allows it (see the module header).
 *
 * @example
 * ```ts
 * const decode = strictResultDecoder(Schema.Struct({ a: Schema.Finite }))
 * decode({ a: 1 })        // Result.succeed({ a: 1 })
 * decode({ a: 1, b: 2 })  // Result.fail(SchemaError: b is unexpected)
 * ```
 */
export const strictResultDecoder = <A>(codec: Schema.ConstraintCodec<A, unknown, never, never>): (input: unknown) => Result.Result<A, Schema.SchemaError> => {
  const decode = Schema.decodeUnknownResult(codec)
  // A Schema that declares a key named like a member of `Object.prototype` reads its input's own keys
  // only (`prototype-free.ts`): decoded from a copy without prototypes, handed on as plain objects.
  if (declaresPrototypeKey(codec.ast)) {
    return (input) => {
      const detached = detachPrototypes(input)
      const decoded = decode(detached.value, strictOptions)
      detached.reattach()
      return Result.map(decoded, withPlainPrototypes)
    }
  }
  const strict = (input: unknown) => decode(input, strictOptions)
  if (!keepsShape(codec.ast)) return strict
  return (input) => {
    const fast = decode(input)
    return Result.isSuccess(fast) && keptEveryKey(input, fast.success) ? fast : strict(input)
  }
}

/** Whether decoding through `ast` builds its result from the input's own shape: no encoding, declaration (but JSON) or recursion. */
const keepsShape = (ast: SchemaAST.AST): boolean => {
  if (ast.encoding !== undefined) return false
  switch (ast._tag) {
    case "Declaration":
      // Schema.Json (and MutableJson, and their annotated copies: the same parser) hands its input on as
      // it is: nothing of it is rebuilt.
      return ast.run === jsonRun
    case "Suspend":
      return false
    case "Objects":
      // An index signature also decodes the keys a property signature (or an earlier index signature)
      // covers, and that result is thrown away: a key it dropped in there is not missing from the
      // output, and only the strict decode refuses it.
      if (ast.indexSignatures.length > 0 && (ast.propertySignatures.length > 0 || ast.indexSignatures.length > 1)) return false
      return ast.propertySignatures.every((p) => keepsShape(p.type)) &&
        ast.indexSignatures.every((i) => keepsShape(i.parameter) && keepsShape(i.type))
    case "Arrays":
      return ast.elements.every(keepsShape) && ast.rest.every(keepsShape)
    case "Union":
      return ast.types.every(keepsShape)
    default:
      return true
  }
}

/** The parser of `Schema.Json`'s declaration, whose decode returns its input itself (Schema's `sameExit`). */
const jsonRun = (Schema.Json.ast as SchemaAST.Declaration).run

const isEnumerable = Object.prototype.propertyIsEnumerable
const hasOwn = Object.prototype.hasOwnProperty

/** Whether every enumerable own key of `input`, at every depth under the keys `output` has, is in `output` (an input kept as is counts as kept). */
const keptEveryKey = (input: unknown, output: unknown): boolean => {
  try {
    return kept(input, output)
  } catch {
    // A throwing getter or proxy trap: the strict decode says what it makes of it.
    return false
  }
}

const kept = (input: unknown, output: unknown): boolean => {
  if (input === output || typeof input !== "object" || input === null) return true
  if (typeof output !== "object" || output === null) return false
  if (Array.isArray(input)) {
    if (!Array.isArray(output) || output.length !== input.length) return false
    for (let i = 0; i < input.length; i++) if (!kept(input[i], output[i])) return false
    return true
  }
  // Every enumerable key of the input is an own key of the output: its string keys by `for…in` (own
  // and inherited: an inherited one, never in a JSON value, fails the check and the strict decode
  // decides), then its own symbols (what Schema's own check reads besides). `Reflect.ownKeys` cost
  // ~0.2 µs a call more on a 2-key object (issue #37).
  for (const key in input) if (!hasOwn.call(output, key)) return false
  const symbols = Object.getOwnPropertySymbols(input)
  for (let i = 0; i < symbols.length; i++) {
    const key = symbols[i]!
    if (isEnumerable.call(input, key) && !hasOwn.call(output, key)) return false
  }
  // Then every key of the output (Schema writes them enumerable), read from the input as Schema read
  // it (`key in input`: a declared key may be inherited, a getter or not enumerable).
  for (const key in output) if (!keptAt(input, output, key)) return false
  const outputSymbols = Object.getOwnPropertySymbols(output)
  for (let i = 0; i < outputSymbols.length; i++) if (!keptAt(input, output, outputSymbols[i]!)) return false
  return true
}

/** `kept` for the values at `key`, the input's read once (a getter may answer differently each time). */
const keptAt = (input: object, output: object, key: PropertyKey): boolean => {
  const value = (output as Record<PropertyKey, unknown>)[key]
  const from = (input as Record<PropertyKey, unknown>)[key]
  return from === value || typeof from !== "object" || from === null || kept(from, value)
}
