/**
 * Code blocks may start with set-up lines that the example checker compiles but readers need not
 * see (twoslash's convention): everything up to a `// ---cut---` line is dropped from the page.
 */
import type MarkdownIt from "markdown-it"

export const cutMarker = "// ---cut---"

export const hideCut = (md: MarkdownIt): void => {
  const fence = md.renderer.rules.fence!
  md.renderer.rules.fence = (tokens, index, options, env, self) => {
    const token = tokens[index]!
    const at = token.content.indexOf(cutMarker)
    if (at !== -1) token.content = token.content.slice(at + cutMarker.length).replace(/^\r?\n/, "")
    return fence(tokens, index, options, env, self)
  }
}
