/**
 * Whether a codec can read its values from JSON: a model sends JSON, so a Schema whose JSON side still
 * holds a declaration of its own (`Schema.declare` without a JSON encoding: a function, a class
 * instance, a `Uint8Array`) describes a field no call can ever fill. Its JSON Schema says nothing
 * (`{}`) and every value is refused ("Expected <Declaration>"): refused when the Schema is given
 * instead. A declaration is readable when it says how (`Schema.Json`, `Schema.Date`, `Option`, `ReadonlyMap`…: a
 * `toCodecJson` or `toCodec` annotation) or encodes to another Schema (a `Schema.Class`); `toCodecJson` itself cannot
 * tell, as it reads an unknown declaration as any JSON value and refuses every one at its guard.
 */
import * as SchemaAST from "effect/SchemaAST"

/**
 * The path (`["a"][0]`, `""` for the root) of the first value of `schema` that JSON cannot give, or
 * undefined when every value can come from JSON.
 *
 * @example
 * ```ts
 * unreadableFromJson(Schema.Struct({ f: Schema.declare((u): u is Function => typeof u === "function") })) // '["f"]'
 * unreadableFromJson(Schema.Struct({ at: Schema.Date }))                                              // undefined
 * ```
 */
export const unreadableFromJson = (schema: { readonly ast: SchemaAST.AST }): string | undefined => {
  const seen = new Set<SchemaAST.AST>()
  const visit = (ast: SchemaAST.AST, path: string): string | undefined => {
    if (seen.has(ast)) return undefined
    seen.add(ast)
    switch (ast._tag) {
      case "Declaration": {
        // A Class (or any declaration that encodes to another Schema): what it encodes to must be readable.
        if (ast.encoding !== undefined) return visit(SchemaAST.toEncoded(ast), path)
        if (ast.annotations?.["toCodecJson"] === undefined && ast.annotations?.["toCodec"] === undefined) return path
        for (const parameter of ast.typeParameters) {
          const found = visit(parameter, path)
          if (found !== undefined) return found
        }
        return undefined
      }
      case "Objects":
        for (const p of ast.propertySignatures) {
          const found = visit(p.type, `${path}[${JSON.stringify(String(p.name))}]`)
          if (found !== undefined) return found
        }
        for (const i of ast.indexSignatures) {
          const found = visit(i.type, `${path}[*]`)
          if (found !== undefined) return found
        }
        return undefined
      case "Arrays": {
        for (let index = 0; index < ast.elements.length; index++) {
          const found = visit(ast.elements[index]!, `${path}[${index}]`)
          if (found !== undefined) return found
        }
        for (const rest of ast.rest) {
          const found = visit(rest, `${path}[*]`)
          if (found !== undefined) return found
        }
        return undefined
      }
      case "Union": {
        // A union can be read from JSON when one of its members can.
        const paths = ast.types.map((member) => visit(member, path))
        return paths.every((p) => p !== undefined) ? paths[0] : undefined
      }
      case "Suspend":
        return visit(ast.thunk(), path)
      default:
        return undefined
    }
  }
  return visit(schema.ast, "")
}
