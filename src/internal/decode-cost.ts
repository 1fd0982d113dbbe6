/**
 * What decoding a value through a Schema can cost, bounded before Effect's decoder runs. Effect tries
 * a union's candidate members one after the other (those its discriminating literals and the value's
 * runtime type leave), each over the whole value, and remembers nothing between tries: a recursive
 * schema whose union members both descend before they differ (`N: anyOf [{ next: N, a }, { next: N, b }]`,
 * the kind an MCP server's JSON Schema may hold) costs 2^depth tries of the value below, synchronously
 * (18 levels: 32 s, the process frozen). Counting the tries costs far less: the tries of a member over
 * a value are the same wherever they happen, so each pair is counted once and its count reused.
 *
 * `decodeCost` counts the nodes the decoder would visit if every candidate failed (an upper bound of
 * what it does), and stops at a limit. `mayBacktrack` says whether a Schema has a union over
 * structured members at all: only those are counted (a flat struct costs nothing more).
 * `costGuard` puts the two together for a tool's arguments: a value may cost 50,000 visits and 16 more
 * per node it holds (measured: 1–3 µs a visit once warm, so at most ~0.1 s beyond what its size costs;
 * a discriminated union costs ~1.3 visits a node, five undiscriminated object members ~5.3), whatever
 * its size: no input buys more than linear work.
 */
import * as SchemaAST from "effect/SchemaAST"

/**
 * Whether decoding through `ast` may try the same value more than once: a union with a member that
 * holds more than a leaf (an object, an array, a reference).
 *
 * @example
 * ```ts
 * mayBacktrack(Schema.Struct({ a: Schema.Finite }).ast) // false
 * ```
 */
export const mayBacktrack = (ast: SchemaAST.AST): boolean => {
  let known = backtracking.get(ast)
  if (known === undefined) backtracking.set(ast, (known = findsBacktracking(ast)))
  return known
}
/** `mayBacktrack`'s answers, by AST (a border that checks each request asks again for the same Schema). */
const backtracking = new WeakMap<SchemaAST.AST, boolean>()

const findsBacktracking = (ast: SchemaAST.AST): boolean => {
  const seen = new Set<SchemaAST.AST>()
  const stack = [ast]
  while (stack.length > 0) {
    const node = stack.pop()!
    if (seen.has(node)) continue
    seen.add(node)
    const children = childrenOf(node)
    if (SchemaAST.isUnion(node) && node.types.length > 1 && node.types.some((member) => childrenOf(member).length > 0)) return true
    stack.push(...children)
  }
  return false
}

const childrenOf = (node: SchemaAST.AST): ReadonlyArray<SchemaAST.AST> => {
  if (SchemaAST.isSuspend(node)) return [node.thunk()]
  if (SchemaAST.isUnion(node)) return node.types
  if (SchemaAST.isObjects(node)) return [...node.propertySignatures.map((p) => p.type), ...node.indexSignatures.map((s) => s.type)]
  if (SchemaAST.isArrays(node)) return [...node.elements, ...node.rest]
  return []
}

/** The members of a union Effect's decoder tries for a value (by index). */
type CandidateIndex = (input: unknown, isConstructor: boolean) => ReadonlyArray<number>

/**
 * Effect's own choice of a union's candidates (its discriminating literals, the value's runtime type):
 * internal to `effect/SchemaAST`, so read when there and, when a release has it no more, every member
 * (a count above Effect's, never below).
 */
const effectCandidates = (SchemaAST as unknown as { readonly getCandidateIndex?: (types: ReadonlyArray<SchemaAST.AST>) => CandidateIndex }).getCandidateIndex
const candidatesOf = (types: ReadonlyArray<SchemaAST.AST>): CandidateIndex => {
  if (typeof effectCandidates === "function") return effectCandidates(types)
  const all = types.map((_, i) => i)
  return () => all
}

/** The count went over its limit. */
class OverLimit {}
const overLimit = new OverLimit()

/**
 * The nodes Effect's decoder visits decoding `value` through `ast` when every union candidate is
 * tried in full, or `Infinity` once that passes `limit`.
 *
 * @example
 * ```ts
 * decodeCost(Schema.Struct({ a: Schema.Finite }).ast, { a: 1 }, 10_000) // 2
 * ```
 */
export const decodeCost = (ast: SchemaAST.AST, value: unknown, limit: number): number => {
  const counted = new Map<SchemaAST.AST, WeakMap<object, number>>()
  const resolved = new Map<SchemaAST.AST, SchemaAST.AST>()
  const indexes = new Map<SchemaAST.Union, CandidateIndex>()
  let total = 0
  const add = (n: number) => {
    total += n
    if (total > limit) throw overLimit
  }
  // The count of one (node, value) pair, its subtree included; a pair met again adds what it counted.
  const visit = (node: SchemaAST.AST, input: unknown): number => {
    while (SchemaAST.isSuspend(node)) {
      let target = resolved.get(node)
      if (target === undefined) resolved.set(node, (target = node.thunk()))
      node = target
    }
    const memo = typeof input === "object" && input !== null ? counted.get(node)?.get(input) : undefined
    if (memo !== undefined) {
      add(memo)
      return memo
    }
    const before = total
    add(1)
    if (SchemaAST.isUnion(node)) {
      let index = indexes.get(node)
      if (index === undefined) indexes.set(node, (index = candidatesOf(node.types)))
      for (const i of index(input, false)) visit(node.types[i]!, input)
    } else if (SchemaAST.isObjects(node) && typeof input === "object" && input !== null && !Array.isArray(input)) {
      const record = input as Record<string, unknown>
      const declared = new Set<PropertyKey>()
      for (const property of node.propertySignatures) {
        declared.add(property.name)
        if (typeof property.name === "string" && Object.hasOwn(record, property.name)) visit(property.type, record[property.name])
      }
      if (node.indexSignatures.length > 0) {
        for (const key of Object.keys(record)) {
          if (declared.has(key)) continue
          for (const signature of node.indexSignatures) visit(signature.type, record[key])
        }
      }
    } else if (SchemaAST.isArrays(node) && Array.isArray(input)) {
      input.forEach((item, i) => {
        if (i < node.elements.length) visit(node.elements[i]!, item)
        else for (const rest of node.rest) visit(rest, item)
      })
    }
    const cost = total - before
    if (typeof input === "object" && input !== null) {
      let byValue = counted.get(node)
      if (byValue === undefined) counted.set(node, (byValue = new WeakMap()))
      byValue.set(input, cost)
    }
    return cost
  }
  try {
    visit(ast, value)
    return total
  } catch (error) {
    // Over the limit, or a value nested deeper than the stack goes: either way, too costly to decode.
    if (error === overLimit || error instanceof RangeError) return Number.POSITIVE_INFINITY
    throw error
  }
}

/** Visits any value may cost, and visits more per node it holds (see the header). */
const baseVisits = 50_000
const visitsPerNode = 16

/** The nodes (objects, arrays, values) `value` holds, each object once (a value from code may hold a cycle); walked without recursion. */
const nodesOf = (value: unknown): number => {
  let nodes = 0
  const seen = new Set<object>()
  const stack: Array<unknown> = [value]
  while (stack.length > 0) {
    const node = stack.pop()
    nodes++
    if (typeof node !== "object" || node === null || seen.has(node)) continue
    seen.add(node)
    for (const child of Object.values(node)) stack.push(child)
  }
  return nodes
}

/**
 * For a Schema that may try a value more than once (`mayBacktrack`), the check to run before decoding
 * a value from outside: the reason to refuse it when its decode would cost more than its size allows
 * (`refusal`, given the limit, says it to the model); undefined for every other Schema (nothing to check).
 *
 * @example
 * ```ts
 * const tooCostly = costGuard(codec.ast, (limit) => `checking them would take more than ${limit} tries`)
 * const refusal = tooCostly?.(JSON.parse(raw)) // a string to tell the model, or undefined
 * ```
 */
export const costGuard = (ast: SchemaAST.AST, refusal: (limit: number) => string): ((value: unknown) => string | undefined) | undefined => {
  // The decoder reads the value through the encoded side (a declaration's JSON form: `Option` is a union of objects).
  const encoded = SchemaAST.toEncoded(ast)
  if (!mayBacktrack(encoded)) return undefined
  return (value) => {
    const limit = baseVisits + visitsPerNode * nodesOf(value)
    return decodeCost(encoded, value, limit) <= limit ? undefined : refusal(limit)
  }
}
