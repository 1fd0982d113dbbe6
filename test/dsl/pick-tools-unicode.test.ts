/**
 * Issue #28 item 14: `pickTools`'s keyword scorer reads words in any script (Unicode letters and
 * digits) and compares them without accents, as users of any language expect.
 */
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { keywordScorer, pickTools, tool } from "../../src/index.ts"

const make = (name: string, description: string) => tool(name, { description, args: Schema.Struct({}), run: () => "ok" })
const meteo = make("meteo", "Donne la météo d'une ville")
const reserver = make("reserver", "Réserve une chambre d'hôtel")
const weather = make("pogoda", "Прогноз погоды для города")
const scoreOf = (input: string, t: ReturnType<typeof make>) => {
  const s = keywordScorer(input, t) as number | { score: number }
  return typeof s === "number" ? s : s.score
}
const picked = (input: string) => Effect.runSync(pickTools(input, [meteo, reserver, weather])).map((p) => p.tool.name)

describe("pickTools in any language (item 14)", () => {
  it("a French query with accents matches a French description", () => {
    expect(scoreOf("Quelle est la météo à Lyon ?", meteo)).toBeGreaterThan(0)
    expect(picked("météo ?")).toEqual(["meteo"])
  })

  it("accents are not needed to match: 'meteo' ~ 'météo', 'hotel' ~ 'hôtel'", () => {
    expect(picked("je cherche un hotel")).toEqual(["reserver"])
    expect(scoreOf("METEO demain", meteo)).toBeGreaterThan(0)
  })

  it("words in Cyrillic are words", () => {
    expect(picked("какая погода в Москве")).toEqual(["pogoda"])
  })

  it("precomposed and decomposed accents are the same word", () => {
    expect(scoreOf("me\u0301te\u0301o", meteo)).toBe(scoreOf("m\u00e9t\u00e9o", meteo))
    expect(scoreOf("me\u0301te\u0301o", meteo)).toBeGreaterThan(0)
  })

  it("ASCII behaviour is unchanged: snake_case and camelCase still split", () => {
    const convert = make("convert_temperature", "Convert celsius to fahrenheit")
    expect(scoreOf("convertTemperature please", convert)).toBeGreaterThan(0)
  })
})
