// Post-LLM corrections (seed 000): filter values, domains, confidence, several references.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { correctSlots, matchTerm } from "../../../examples/ontology-search/corrections.ts"
import type { Submission } from "../../../examples/ontology-search/slots.ts"
import { loadCatalogue } from "../../../examples/ontology-search/store.ts"

const { vocabulary } = loadCatalogue()
const submit = (slots: Partial<Submission["slots"]>, gaps: Submission["gaps"] = []): Submission => ({
  slots: { domains: [], filters: {}, ranges: {}, ...slots }, interpretation: "test", gaps
})

describe("filter values", () => {
  it("exact, case-insensitive, substring, edit distance, in that order", () => {
    const roads = vocabulary.enumValues.get("roadTypes")!
    expect(matchTerm("motorway", roads)).toEqual({ value: "motorway", match: "exact" })
    expect(matchTerm("MOTORWAY", roads)).toEqual({ value: "motorway", match: "case-insensitive" })
    expect(matchTerm("ramp", roads)).toEqual({ value: "highway-ramp", match: "substring" })
    expect(matchTerm("motoway", roads)).toEqual({ value: "motorway", match: "fuzzy" })
    expect(matchTerm("autobahn", roads)).toBeUndefined()
  })

  it("a short code is never fuzzily turned into another code", () => {
    expect(matchTerm("UK", vocabulary.enumValues.get("country")!)).toBeUndefined()
  })

  it("misspelt values are corrected, confidence medium; exact ones high", () => {
    const fuzzy = correctSlots(vocabulary, submit({ domains: ["hdmap"], filters: { roadTypes: "motoway" } }))
    expect(fuzzy.filters).toEqual({ roadTypes: ["motorway"] })
    expect(fuzzy.corrections).toContainEqual({ slot: "filters.roadTypes", from: "motoway", to: "motorway", match: "fuzzy" })
    expect(fuzzy.confidence).toBe("medium")
    expect(correctSlots(vocabulary, submit({ domains: ["hdmap"], filters: { roadTypes: "motorway" } })).confidence).toBe("high")
  })

  it("unknown terms become gaps with suggestions from the vocabulary, confidence low", () => {
    const out = correctSlots(vocabulary, submit({ domains: ["scenario"], filters: { weather: "hail", scenarioType: "zebra" } }))
    const weather = out.gaps.find((g) => g.term === "hail")
    expect(weather?.suggestions?.length).toBeGreaterThan(0)
    for (const s of weather?.suggestions ?? []) expect(vocabulary.enumValues.get("weather")).toContain(s)
    expect(out.gaps.find((g) => g.term === "zebra")?.reason).toBe("not a value of scenarioType")
    expect(out.confidence).toBe("low")
  })

  it("an unknown property key is a gap, a misspelt one corrected", () => {
    const out = correctSlots(vocabulary, submit({ filters: { roadType: "urban", colour: "red" } }))
    expect(out.filters).toEqual({ roadTypes: ["urban"] })
    expect(out.gaps.map((g) => g.term)).toContain("colour")
  })
})

describe("confidence counts every correction the answer needed", () => {
  it("a property key or a domain found by substring or edit distance makes it medium, as a value would", () => {
    const key = correctSlots(vocabulary, submit({ domains: ["hdmap"], filters: { roadtype: "motorway" } }))
    expect(key.corrections).toContainEqual({ slot: "filters", from: "roadtype", to: "roadTypes", match: "substring" })
    expect(key.confidence).toBe("medium")
    const range = correctSlots(vocabulary, submit({ domains: ["hdmap"], ranges: { lanecnt: { min: 2 } } }))
    expect(range.ranges).toEqual({ laneCount: { min: 2 } })
    expect(range.confidence).toBe("medium")
    const domain = correctSlots(vocabulary, submit({ domains: ["hd-map"], filters: { roadTypes: "motorway" } }))
    expect(domain.domains).toEqual(["hdmap"])
    expect(domain.confidence).toBe("medium")
    // Exact or only differing in case: high.
    expect(correctSlots(vocabulary, submit({ domains: ["HDMAP"], filters: { RoadTypes: "motorway" } })).confidence).toBe("high")
  })
})

describe("the model's own gaps", () => {
  const all = new Set([...vocabulary.domains.keys(), ...vocabulary.propertyDomains.keys(), ...[...vocabulary.enumValues.values()].flat()])

  it("carry suggestions from the real vocabulary only: the model's own when they are vocabulary terms, else a tokenised match", () => {
    const out = correctSlots(vocabulary, submit({ domains: ["hdmap"], filters: { roadTypes: "motorway" } }, [
      { term: "autobahn", reason: "no such road type", suggestions: ["autobahn-ramp", "Motorway"] },
      { term: "lidar scans", reason: "not a map property" },
      { term: "thermal", reason: "no property or value of the shapes", suggestions: ["infrared"] }
    ]))
    const of = (term: string) => out.gaps.find((g) => g.term === term)
    expect(of("autobahn")?.suggestions).toEqual(["motorway"])
    expect(of("lidar scans")?.suggestions).toContain("lidar")
    expect(of("thermal")).toEqual({ term: "thermal", reason: "no property or value of the shapes" })
    for (const g of out.gaps) for (const suggestion of g.suggestions ?? []) expect(all.has(suggestion), suggestion).toBe(true)
  })

  it("a term both the model and the corrections report is one gap", () => {
    const out = correctSlots(vocabulary, submit({ domains: ["scenario"], filters: { country: "Germnay" } }, [{ term: "Germnay", reason: "unknown country" }]))
    expect(out.gaps.map((g) => g.term)).toEqual(["Germnay"])
    expect(out.gaps[0]!.suggestions?.every((s) => vocabulary.enumValues.get("country")!.includes(s))).toBe(true)
  })
})

describe("domains", () => {
  it("scenario + roadTypes adds hdmap and keeps scenario", () => {
    const out = correctSlots(vocabulary, submit({ domains: ["scenario"], filters: { roadTypes: "motorway" } }))
    expect(out.domains).toEqual(["scenario", "hdmap"])
    expect(out.corrections).toContainEqual({ slot: "domains", from: "roadTypes", to: "hdmap", match: "added" })
  })

  it("an unknown domain is a gap; a misspelt one is corrected", () => {
    const out = correctSlots(vocabulary, submit({ domains: ["hd-map", "spaceship"] }))
    expect(out.domains).toEqual(["hdmap"])
    expect(out.gaps.map((g) => g.term)).toEqual(["spaceship"])
  })
})

describe("references", () => {
  it("one is kept, the others are gaps explaining the single-slot rule", () => {
    const out = correctSlots(vocabulary, submit({ domains: ["recording", "scenario"], references: [{ domain: "scenario" }, { domain: "hdmap" }] }))
    expect(out.reference).toBe("scenario")
    expect(out.gaps).toEqual([{ term: "hdmap", reason: expect.stringContaining("only one cross-domain reference") }])
  })

  it("a reference no chosen domain has is a gap", () => {
    const out = correctSlots(vocabulary, submit({ domains: ["hdmap"], references: { domain: "scenario" } }))
    expect(out.reference).toBeUndefined()
    expect(out.gaps[0]?.term).toBe("scenario")
  })
})

const sameTerm = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase()

describe("property: a corrected filter value is in the vocabulary or reported as a gap", () => {
  const keys = [...vocabulary.enumValues.keys()]
  const anyValue = fc.oneof(
    fc.string(),
    fc.constantFrom(...[...vocabulary.enumValues.values()].flat()),
    fc.constantFrom(...[...vocabulary.enumValues.values()].flat()).chain((v) => fc.nat(v.length).map((i) => v.slice(0, i) + v.slice(i + 1))),
    fc.constantFrom("\"; DROP ALL; #", "> } INSERT DATA { <x> <y> <z> } #", "\\u0022", "motorway\" || true || \"")
  )
  it("holds for any submission", () => {
    fc.assert(fc.property(fc.dictionary(fc.oneof(fc.constantFrom(...keys), fc.string()), fc.oneof(anyValue, fc.array(anyValue, { maxLength: 3 }))), (filters) => {
      const out = correctSlots(vocabulary, submit({ filters }))
      for (const [key, values] of Object.entries(out.filters)) for (const v of values) expect(vocabulary.enumValues.get(key)).toContain(v)
      for (const [key, raw] of Object.entries(filters)) {
        for (const v of typeof raw === "string" ? [raw] : raw) {
          const inFilters = Object.entries(out.filters).some(([pk, vs]) => vs.includes(matchTerm(v, vocabulary.enumValues.get(pk) ?? [])?.value ?? "\u0000"))
          // Gaps are one per term, told apart without case or surrounding spaces ("B" and "b" are one gap).
          const asGap = out.gaps.some((g) => sameTerm(g.term, v) || sameTerm(g.term, key))
          expect(inFilters || asGap).toBe(true)
        }
      }
    }), { numRuns: Number(process.env.PROPERTY_RUNS ?? 200) })
  })
})
