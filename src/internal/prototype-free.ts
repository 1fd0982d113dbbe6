/**
 * Arguments read by their own keys only. Effect's struct parser reads a declared key with `key in
 * input`, so on a plain object an absent `constructor`, `toString` or `valueOf` (any member of
 * `Object.prototype`) is read from the prototype: a valid call without that optional key is refused
 * ("Expected string at ["constructor"]"), and a missing required one is reported as the wrong value
 * rather than as missing. A Schema that declares such a key decodes a copy of its input whose objects
 * have no prototype (`detachPrototypes`), gives those copies their prototype back once decoded,
 * wherever the decode put them (inside an `Option`, a `Map`, a `Schema.Unknown` field of a Class
 * instance), and hands the result on as plain objects (`withPlainPrototypes`). Schemas that declare
 * none (nearly all) pay nothing.
 */
import * as SchemaAST from "effect/SchemaAST"

/**
 * Whether `ast` (or its encoded side, which reads the input) declares a property named like a member
 * of `Object.prototype`, at any depth.
 *
 * @example
 * ```ts
 * declaresPrototypeKey(Schema.Struct({ constructor: Schema.optionalKey(Schema.String) }).ast) // true
 * declaresPrototypeKey(Schema.Struct({ a: Schema.Number }).ast)                               // false
 * ```
 */
export const declaresPrototypeKey = (ast: SchemaAST.AST): boolean => {
  const seen = new Set<SchemaAST.AST>()
  const visit = (node: SchemaAST.AST): boolean => {
    if (seen.has(node)) return false
    seen.add(node)
    switch (node._tag) {
      case "Objects":
        return node.propertySignatures.some((p) => (typeof p.name === "string" && p.name in Object.prototype) || visit(p.type)) ||
          node.indexSignatures.some((i) => visit(i.type))
      case "Arrays":
        return node.elements.some(visit) || node.rest.some(visit)
      case "Union":
        return node.types.some(visit)
      case "Suspend":
        return visit(node.thunk())
      case "Declaration":
        return node.typeParameters.some(visit)
      default:
        return false
    }
  }
  return visit(ast) || visit(SchemaAST.toEncoded(ast))
}

/** Arrays and plain objects (an `Object.prototype` or no prototype): what JSON arguments are made of. */
export const isContainer = (u: unknown): u is object => {
  if (typeof u !== "object" || u === null) return false
  if (Array.isArray(u)) return true
  const proto = Object.getPrototypeOf(u)
  return proto === null || proto === Object.prototype
}

/**
 * A copy of `value` whose plain objects have no prototype (the same own enumerable string keys, as own
 * data properties, whatever their name; arrays copied; anything else as it is), and `reattach`, which
 * gives every one of those copies `Object.prototype` again: call it once the copy is decoded, so that
 * the copies a decode kept inside what it built (an `Option`'s value, a `Map`'s entries, a Class
 * instance's `Schema.Unknown` field) are plain objects too. Throws what a getter or proxy trap of
 * `value` throws.
 *
 * @example
 * ```ts
 * const detached = detachPrototypes({ a: { b: 1 } })
 * Object.getPrototypeOf(detached.value.a) // null
 * const decoded = decode(detached.value)
 * detached.reattach()                     // detached.value.a, and wherever decoded holds it: Object.prototype
 * ```
 */
export const detachPrototypes = <A>(value: A): { readonly value: A; readonly reattach: () => void } => {
  const copies: Array<object> = []
  const detached = copy(value, () => {
    const object: Record<string, unknown> = Object.create(null)
    copies.push(object)
    return object
  }) as A
  return { value: detached, reattach: () => copies.forEach((object) => Object.setPrototypeOf(object, Object.prototype)) }
}

/**
 * `value` with every object without a prototype (and every plain object) copied to a plain object, a
 * key `"__proto__"` kept as an own data property.
 *
 * @example
 * ```ts
 * Object.getPrototypeOf(withPlainPrototypes(Object.assign(Object.create(null), { a: 1 }))) // Object.prototype
 * ```
 */
export const withPlainPrototypes = <A>(value: A): A => copy(value, () => ({})) as A

/**
 * A copy of `value` whose arrays are new arrays and whose plain objects are `make()` with the same own
 * enumerable string keys (as own data properties, whatever their name); anything else is kept as it
 * is. Without recursion (arguments may be nested deeper than the stack), and a shared or circular
 * reference stays one.
 */
const copy = (value: unknown, make: () => Record<string, unknown>): unknown => {
  if (!isContainer(value)) return value
  const copies = new Map<object, unknown>()
  const pending: Array<readonly [source: object, target: Record<string, unknown> | Array<unknown>]> = []
  const copyOf = (node: unknown): unknown => {
    if (!isContainer(node)) return node
    const known = copies.get(node)
    if (known !== undefined) return known
    const target = Array.isArray(node) ? new Array<unknown>(node.length) : make()
    copies.set(node, target)
    pending.push([node, target])
    return target
  }
  const root = copyOf(value)
  while (pending.length > 0) {
    const [source, target] = pending.pop()!
    if (Array.isArray(source)) {
      for (let i = 0; i < source.length; i++) (target as Array<unknown>)[i] = copyOf(source[i])
    } else {
      for (const key of Object.keys(source)) {
        Object.defineProperty(target, key, { value: copyOf((source as Record<string, unknown>)[key]), enumerable: true, writable: true, configurable: true })
      }
    }
  }
  return root
}
