/**
 * Argument repair, for tools that opt in: small, recorded corrections of what models commonly get
 * almost right, guided by the tool's Schema. The result is always decoded again with the Schema, so a
 * repair can make a call valid but never let an invalid one through.
 */
import * as SchemaAST from "effect/SchemaAST"
import { isRecord } from "../internal/is-record.ts"

/** Which repairs a tool opts into; `repair: true` means all of them. */
export interface RepairOptions {
  /** A string for a literal-union field that is not exact: case-insensitive, then substring, then edit distance <= 4. */
  readonly literals?: boolean
  /** A numeric string for a number field ("42" → 42). */
  readonly numericStrings?: boolean
  /** JSON sent as a string where an object or array is expected, including the whole arguments string encoded twice. */
  readonly jsonStrings?: boolean
}

/** One recorded correction. */
export interface ArgsCorrection {
  readonly path: ReadonlyArray<string | number>
  readonly kind: "literal" | "numeric-string" | "json-string"
  readonly from: unknown
  readonly to: unknown
}

/** The repaired value and what was changed (empty when nothing was). */
export interface Repaired {
  readonly value: unknown
  readonly corrections: ReadonlyArray<ArgsCorrection>
}

/** Normalises `true` to every repair. */
export const repairOptions = (option: boolean | RepairOptions | undefined): RepairOptions | undefined =>
  option === undefined || option === false
    ? undefined
    : option === true
    ? { literals: true, numericStrings: true, jsonStrings: true }
    : option

/** Repairs raw model arguments against the Schema's AST. */
export const repairArguments = (ast: SchemaAST.AST, raw: unknown, options: RepairOptions): Repaired => {
  const corrections: Array<ArgsCorrection> = []
  let value = raw
  if (typeof value === "string") {
    const parsed = parseJson(value)
    if (parsed.ok) value = parsed.value
    if (typeof value === "string" && options.jsonStrings === true) {
      const inner = parseJson(value)
      if (inner.ok && typeof inner.value === "object" && inner.value !== null) {
        corrections.push({ path: [], kind: "json-string", from: value, to: inner.value })
        value = inner.value
      }
    }
  }
  return { value: walk(ast, value, [], options, corrections), corrections }
}

const walk = (
  ast: SchemaAST.AST,
  value: unknown,
  path: ReadonlyArray<string | number>,
  options: RepairOptions,
  corrections: Array<ArgsCorrection>
): unknown => {
  if ((SchemaAST.isObjects(ast) || SchemaAST.isArrays(ast)) && typeof value === "string" && options.jsonStrings === true) {
    const parsed = parseJson(value)
    if (parsed.ok && typeof parsed.value === "object" && parsed.value !== null) {
      corrections.push({ path, kind: "json-string", from: value, to: parsed.value })
      return walk(ast, parsed.value, path, options, corrections)
    }
  }
  if (SchemaAST.isObjects(ast) && isRecord(value)) {
    const out: Record<string, unknown> = { ...value }
    for (const property of ast.propertySignatures) {
      const key = property.name
      if (typeof key === "string" && key in out) out[key] = walk(property.type, out[key], [...path, key], options, corrections)
    }
    return out
  }
  if (SchemaAST.isArrays(ast) && Array.isArray(value)) {
    const element = ast.rest[0]
    return element === undefined ? value : value.map((item, i) => walk(element, item, [...path, i], options, corrections))
  }
  if (SchemaAST.isNumber(ast) && typeof value === "string" && options.numericStrings === true) {
    const n = value.trim() === "" ? Number.NaN : Number(value)
    if (Number.isFinite(n)) {
      corrections.push({ path, kind: "numeric-string", from: value, to: n })
      return n
    }
    return value
  }
  const literals = stringLiterals(ast)
  if (literals !== undefined && typeof value === "string" && !literals.includes(value) && options.literals === true) {
    const match = closestLiteral(value, literals)
    if (match !== undefined) {
      corrections.push({ path, kind: "literal", from: value, to: match })
      return match
    }
  }
  return value
}

/** The string literals of a literal or a union of literals; undefined for anything else. */
const stringLiterals = (ast: SchemaAST.AST): ReadonlyArray<string> | undefined => {
  if (SchemaAST.isLiteral(ast)) return typeof ast.literal === "string" ? [ast.literal] : undefined
  if (SchemaAST.isUnion(ast)) {
    const members = ast.types.filter((t) => !SchemaAST.isUndefined(t))
    const literals = members.map((t) => (SchemaAST.isLiteral(t) && typeof t.literal === "string" ? t.literal : undefined))
    return literals.length > 0 && literals.every((l) => l !== undefined) ? literals as Array<string> : undefined
  }
  return undefined
}

/**
 * The one literal `value` most likely meant: a case-insensitive match, else the only literal that
 * contains it or is contained in it, else the only closest literal within edit distance 4.
 */
export const closestLiteral = (value: string, literals: ReadonlyArray<string>): string | undefined => {
  const lower = value.trim().toLowerCase()
  if (lower === "") return undefined
  const exact = literals.filter((l) => l.toLowerCase() === lower)
  if (exact.length === 1) return exact[0]
  const containing = literals.filter((l) => l.toLowerCase().includes(lower) || lower.includes(l.toLowerCase()))
  if (containing.length === 1) return containing[0]
  const distances = literals.map((l) => ({ l, d: editDistance(lower, l.toLowerCase()) })).filter(({ d }) => d <= 4)
  const best = Math.min(...distances.map(({ d }) => d))
  const closest = distances.filter(({ d }) => d === best)
  return closest.length === 1 ? closest[0]!.l : undefined
}

/** Levenshtein distance. */
export const editDistance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}


const parseJson = (text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}
