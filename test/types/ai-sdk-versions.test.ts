/**
 * `fromAiSdk` and `aiSdkLayer` accept the language models of every AI SDK specification version
 * (`LanguageModelV2` of `ai` 5, `V3` of `ai` 6, `V4` of `ai` 7 and `@ai-sdk/*` 4.x) without a cast,
 * and refuse what is not a model. `tsc --noEmit` fails if an `@ts-expect-error` line stops being an error.
 */
import type { LanguageModelV2, LanguageModelV3 } from "@ai-sdk/provider"
import type { LanguageModelV4 } from "ai-sdk-provider-v4"
import { describe, expectTypeOf, it } from "vitest"
import { aiSdkLayer, fromAiSdk, type ModelClient } from "../../src/index.ts"

declare const v2: LanguageModelV2
declare const v3: LanguageModelV3
declare const v4: LanguageModelV4

describe("fromAiSdk's model type", () => {
  it("takes a model of every specification version", () => {
    const typeOnly = (): void => {
      expectTypeOf(fromAiSdk(v2)).toEqualTypeOf<ModelClient>()
      expectTypeOf(fromAiSdk(v3)).toEqualTypeOf<ModelClient>()
      expectTypeOf(fromAiSdk(v4, { providerOptions: { openai: { reasoningEffort: "low" } } })).toEqualTypeOf<ModelClient>()
      aiSdkLayer(v4)
    }
    expectTypeOf(typeOnly).toBeFunction()
  })

  it("refuses what is not a language model", () => {
    const typeOnly = (): void => {
      // @ts-expect-error an embedding model or any object without doGenerate is not a language model
      fromAiSdk({ specificationVersion: "v3", provider: "p", modelId: "m" })
      // @ts-expect-error a specification version the adapter does not speak
      fromAiSdk({ specificationVersion: "v1", provider: "p", modelId: "m", doGenerate: async () => ({}) })
    }
    expectTypeOf(typeOnly).toBeFunction()
  })
})
