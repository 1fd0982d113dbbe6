// Post-LLM corrections (seed 000): filter values, domains, confidence, several references, ranges held to the declared bounds.
import { Schema } from "effect"
import fc from "fast-check"
import { Store } from "oxigraph"
import { describe, expect, it } from "vitest"
import { correctSlots, matchTerm } from "../../../examples/ontology-search/corrections.ts"
import { answer, search } from "../../../examples/ontology-search/search-agent.ts"
import { Submission } from "../../../examples/ontology-search/slots.ts"
import { standInModel } from "../../../examples/ontology-search/stand-in-model.ts"
import { loadCatalogue, SCHEMA_GRAPH } from "../../../examples/ontology-search/store.ts"
import { declaredRange, readVocabulary } from "../../../examples/ontology-search/vocabulary.ts"

const catalogue = loadCatalogue()
const { vocabulary } = catalogue
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

describe("ranges are held to the range the shapes declare", () => {
  type Ranges = Submission["slots"]["ranges"]
  const ranged = (domains: ReadonlyArray<string>, ranges: Ranges) => correctSlots(vocabulary, submit({ domains: [...domains], ranges }))
  const found = (domains: ReadonlyArray<string>, ranges: Ranges) => answer(catalogue, submit({ domains: [...domains], ranges }), 0).total

  it("the vocabulary reads each property's bounds from the shapes", () => {
    const lanes = vocabulary.domains.get("hdmap")!.properties.get("laneCount")!
    expect([lanes.datatype, lanes.min, lanes.max]).toEqual(["integer", 1, 8])
    expect(declaredRange(vocabulary, "laneCount", ["hdmap"])).toEqual({ min: 1, max: 8, integer: true })
    // Through the scenario's HD map, as the compiled query reads it.
    expect(declaredRange(vocabulary, "laneCount", ["scenario"])).toEqual({ min: 1, max: 8, integer: true })
    expect(declaredRange(vocabulary, "duration", ["scenario"])).toEqual({ min: 1, max: 3600, integer: true })
    expect(declaredRange(vocabulary, "duration", ["scenario", "recording"])).toEqual({ min: 1, max: 7200, integer: true })
    expect(declaredRange(vocabulary, "area", ["hdmap"])).toEqual({ min: 0, integer: false })
  })

  it("exclusive bounds are read as the inclusive ones they imply; a bound that is not a number is none", () => {
    const store = new Store()
    store.load(`@prefix sh: <http://www.w3.org/ns/shacl#> . @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
      @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> . @prefix ex: <urn:ex#> .
      ex:Road rdfs:label "road" .
      ex:RoadShape a sh:NodeShape ; sh:targetClass ex:Road ;
        sh:property [ sh:path ex:lanes ; sh:datatype xsd:integer ; sh:minExclusive 0 ; sh:maxExclusive 9 ] ;
        sh:property [ sh:path ex:width ; sh:datatype xsd:decimal ; sh:minExclusive 2.5 ; sh:maxInclusive "wide" ] ;
        sh:property [ sh:path ex:speed ; sh:datatype xsd:integer ; sh:minInclusive 0.5 ; sh:maxInclusive 130 ; sh:maxExclusive 120 ] .`,
    { format: "text/turtle", to_graph_name: SCHEMA_GRAPH })
    const road = readVocabulary(store).domains.get("road")!.properties
    expect([road.get("lanes")!.min, road.get("lanes")!.max]).toEqual([1, 8])
    expect([road.get("width")!.min, road.get("width")!.max]).toEqual([2.5, undefined])
    expect([road.get("speed")!.min, road.get("speed")!.max]).toEqual([1, 119])
  })

  it("a bound beyond the declared range is clamped into it, with a correction and a gap, confidence low: laneCount ≥ 20 finds the widest maps, not 0 hits at high", async () => {
    const out = ranged(["hdmap"], { laneCount: { min: 20 } })
    expect(out.ranges).toEqual({ laneCount: { min: 8 } })
    expect(out.corrections).toContainEqual({ slot: "ranges.laneCount.min", from: "20", to: "8", match: "clamped" })
    expect(out.gaps).toEqual([{ term: "laneCount min 20", reason: "the shapes allow laneCount from 1 to 8; searched from 8, the largest value allowed" }])
    expect(out.confidence).toBe("low")
    expect(found(["hdmap"], { laneCount: { min: 20 } })).toBeGreaterThan(0)
    const below = ranged(["hdmap"], { laneCount: { max: 0 } })
    expect([below.ranges, below.confidence]).toEqual([{ laneCount: { max: 1 } }, "low"])
    // The same through the model: the stand-in reads "at least 20 lanes" as laneCount min 20.
    const searched = await search(catalogue, standInModel(), "motorway maps with at least 20 lanes")
    expect(searched.slots.ranges).toEqual({ laneCount: { min: 8 } })
    expect(searched.slots.gaps.map((g) => g.term)).toEqual(["laneCount min 20"])
    expect(searched.slots.confidence).toBe("low")
    expect(searched.total).toBeGreaterThan(0)
  })

  it("a bound past the open side of the declared range is clamped to its edge: the same assets, reported, confidence kept", () => {
    const out = ranged(["hdmap"], { laneCount: { min: 0, max: 100 } })
    expect(out.ranges).toEqual({ laneCount: { min: 1, max: 8 } })
    expect(out.corrections).toEqual([
      { slot: "ranges.laneCount.min", from: "0", to: "1", match: "clamped" },
      { slot: "ranges.laneCount.max", from: "100", to: "8", match: "clamped" }
    ])
    expect([out.gaps, out.confidence]).toEqual([[], "high"])
    expect(found(["hdmap"], { laneCount: { min: 0, max: 100 } })).toBe(found(["hdmap"], {}))
  })

  it("the range depends on the domains searched: scenarios last at most 3600 s, recordings 7200 s", () => {
    const scenarios = ranged(["scenario"], { duration: { min: 5000 } })
    expect([scenarios.ranges, scenarios.confidence]).toEqual([{ duration: { min: 3600 } }, "low"])
    const recordings = ranged(["recording"], { duration: { min: 5000 } })
    expect([recordings.ranges, recordings.corrections, recordings.confidence]).toEqual([{ duration: { min: 5000 } }, [], "high"])
  })

  it("min > max: a reversed range is swapped and reported (medium), also when clamping would leave min above max", () => {
    const reversed = ranged(["hdmap"], { laneCount: { min: 5, max: 2 } })
    expect(reversed.ranges).toEqual({ laneCount: { min: 2, max: 5 } })
    expect(reversed.corrections).toEqual([{ slot: "ranges.laneCount", from: "min 5, max 2", to: "min 2, max 5", match: "swapped" }])
    expect(reversed.confidence).toBe("medium")
    // Clamped alone, min 20 would become 8, above max 5.
    expect(ranged(["hdmap"], { laneCount: { min: 20, max: 5 } }).ranges).toEqual({ laneCount: { min: 5, max: 8 } })
    // Both beyond the top: the largest value allowed, and a gap.
    const beyond = ranged(["hdmap"], { laneCount: { min: 20, max: 30 } })
    expect([beyond.ranges, beyond.confidence]).toEqual([{ laneCount: { min: 8, max: 8 } }, "low"])
  })

  it("a fractional bound of an xsd:integer property is rounded inwards; a range holding no integer is a gap", () => {
    const inwards = ranged(["hdmap"], { laneCount: { min: 2.5, max: 6.7 } })
    expect([inwards.ranges, inwards.confidence]).toEqual([{ laneCount: { min: 3, max: 6 } }, "high"])
    expect(inwards.corrections).toEqual([
      { slot: "ranges.laneCount.min", from: "2.5", to: "3", match: "rounded" },
      { slot: "ranges.laneCount.max", from: "6.7", to: "6", match: "rounded" }
    ])
    const none = ranged(["hdmap"], { laneCount: { min: 2.2, max: 2.8 } })
    expect(none.ranges).toEqual({ laneCount: { min: 3, max: 3 } })
    expect(none.gaps.map((g) => g.term)).toEqual(["laneCount min 2.2 max 2.8"])
    expect(none.confidence).toBe("low")
    // xsd:decimal keeps its fractions.
    expect(ranged(["scenario"], { egoSpeed: { min: 2.5 } })).toMatchObject({ ranges: { egoSpeed: { min: 2.5 } }, corrections: [], confidence: "high" })
  })

  it("NaN and Infinity: the submit_slots schema refuses them; given to the corrections anyway, they are dropped or clamped, and reported", () => {
    const decode = Schema.decodeUnknownSync(Submission)
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, JSON.parse("1e999")]) {
      expect(() => decode({ slots: { domains: [], filters: {}, ranges: { laneCount: { min: bad } } }, interpretation: "", gaps: [] })).toThrow()
    }
    const area = ranged(["hdmap"], { area: { min: Number.NaN, max: Number.POSITIVE_INFINITY } })
    expect(area.ranges).toEqual({})
    expect(area.corrections).toEqual([
      { slot: "ranges.area.min", from: "NaN", to: "(no bound)", match: "dropped" },
      { slot: "ranges.area.max", from: "Infinity", to: "(no bound)", match: "dropped" }
    ])
    expect([area.gaps.map((g) => g.term), area.confidence]).toEqual([["area min"], "low"])
    const lanes = ranged(["hdmap"], { laneCount: { min: Number.NEGATIVE_INFINITY, max: Number.POSITIVE_INFINITY } })
    expect([lanes.ranges, lanes.confidence]).toEqual([{ laneCount: { min: 1, max: 8 } }, "high"])
    const above = ranged(["hdmap"], { area: { min: Number.POSITIVE_INFINITY } })
    expect([above.ranges, above.gaps.map((g) => g.term), above.confidence]).toEqual([{}, ["area min Infinity"], "low"])
  })

  it("two keys naming one property: the first range is used, the second is a gap (not overwritten silently)", () => {
    const out = ranged(["hdmap"], { laneCount: { min: 2 }, lanecount: { max: 3 } })
    expect(out.ranges).toEqual({ laneCount: { min: 2 } })
    expect(out.gaps).toEqual([{ term: "lanecount", reason: "laneCount already has a range (given as laneCount); one range per property is used" }])
  })
})

describe("property: corrected ranges lie inside the declared range, and nothing changes silently", () => {
  const numeric = ["laneCount", "duration", "egoSpeed", "area", "frameRate"]
  const edges = [...vocabulary.domains.values()].flatMap((d) => [...d.properties.values()].flatMap((p) => [p.min, p.max].filter((x) => x !== undefined)))
  const bound = fc.oneof(
    fc.double(), // NaN, ±Infinity, -0, subnormals, ±Number.MAX_VALUE
    fc.integer({ min: -20, max: 8000 }),
    fc.double({ min: -20, max: 8000, noNaN: true }),
    fc.constantFrom(...edges).chain((e) => fc.constantFrom(e, e - 1, e + 1, e - 0.5, e + 0.5))
  )
  const range = fc.record({ min: bound, max: bound }, { requiredKeys: [] })
  const key = fc.oneof(fc.constantFrom(...numeric), fc.constantFrom("lanecount", "LaneCount", "lanecnt", "Duration", "speed", "roadTypes"), fc.string())
  // The widest range any shape declares for a property, whatever the domains: an independent bound.
  const widest = (property: string) => {
    const shapes = [...vocabulary.domains.values()].flatMap((d) => { const p = d.properties.get(property); return p === undefined ? [] : [p] })
    return { min: Math.min(...shapes.map((p) => p.min ?? -Infinity)), max: Math.max(...shapes.map((p) => p.max ?? Infinity)), integer: shapes.every((p) => p.datatype === "integer") }
  }

  it("holds for any ranges, hostile numbers included", () => {
    fc.assert(fc.property(fc.subarray([...vocabulary.domains.keys()]), fc.dictionary(key, range, { maxKeys: 4 }), (domains, ranges) => {
      const out = correctSlots(vocabulary, submit({ domains, ranges }))
      for (const [property, r] of Object.entries(out.ranges)) {
        const declared = declaredRange(vocabulary, property, out.domains)!
        const wide = widest(property)
        for (const b of [r.min, r.max]) {
          if (b === undefined) continue
          expect(Number.isFinite(b)).toBe(true)
          expect(b).toBeGreaterThanOrEqual(Math.max(declared.min ?? -Infinity, wide.min))
          expect(b).toBeLessThanOrEqual(Math.min(declared.max ?? Infinity, wide.max))
          if (wide.integer) expect(Number.isInteger(b)).toBe(true)
        }
        if (r.min !== undefined && r.max !== undefined) expect(r.min).toBeLessThanOrEqual(r.max)
      }
      for (const [k, r] of Object.entries(ranges)) {
        const property = matchTerm(k, numeric)?.value
        const reportedAsGap = out.gaps.some((g) => sameTerm(g.term, k))
        if (property === undefined) {
          if (r.min !== undefined || r.max !== undefined) expect(reportedAsGap).toBe(true)
          continue
        }
        for (const b of ["min", "max"] as const) {
          const asked = r[b]
          if (asked === undefined || out.ranges[property]?.[b] === asked) continue
          const corrected = out.corrections.some((c) => c.slot === `ranges.${property}.${b}` || c.slot === `ranges.${property}`)
          expect(corrected || reportedAsGap, `${k}.${b} = ${asked} changed silently`).toBe(true)
        }
        // A bound that is no number, or that excludes everything the shapes allow, never passes at "high".
        const declared = declaredRange(vocabulary, property, out.domains)!
        const [lo, hi] = r.min !== undefined && r.max !== undefined && r.min > r.max ? [r.max, r.min] : [r.min, r.max]
        const excludesAll = (lo !== undefined && lo > (declared.max ?? Infinity)) || (hi !== undefined && hi < (declared.min ?? -Infinity))
        if (Number.isNaN(r.min) || Number.isNaN(r.max) || excludesAll) expect(out.confidence).toBe("low")
      }
    }), { numRuns: Number(process.env.PROPERTY_RUNS ?? 200) })
  })
})
