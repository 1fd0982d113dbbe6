/**
 * Compile-time guarantees of AG-UI shared state: the state's type comes from its Schema, so `get`
 * answers it, `set` and `update` accept only it, `initial` must be one, and the Effects name their
 * typed errors (no requirement: a tool using them adds none to its agent).
 */
import { Effect, Schema } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import { agent, tool } from "../../src/index.ts"
import { agUiHandler, type AgUiState, agUiState, type AgUiStateInvalid, type AgUiStateUnavailable } from "../../src/protocols/ag-ui/index.ts"
import { scriptedModel } from "../../src/testing/index.ts"

const Recipe = Schema.Struct({ title: Schema.String, servings: Schema.Int })
type Recipe = typeof Recipe.Type

describe("agUiState", () => {
  it("types get, set and update from the Schema, with typed errors and no requirement", () => {
    const recipe = agUiState("recipe", Recipe, { initial: { title: "", servings: 1 } })
    expectTypeOf(recipe).toEqualTypeOf<AgUiState<Recipe, { readonly title: string; readonly servings: number }>>()
    expectTypeOf(recipe.get).toEqualTypeOf<Effect.Effect<Recipe, AgUiStateUnavailable, never>>()
    expectTypeOf(recipe.set({ title: "Soup", servings: 2 })).toEqualTypeOf<Effect.Effect<Recipe, AgUiStateUnavailable | AgUiStateInvalid, never>>()
    // @ts-expect-error servings must be a number: set takes the state's type
    recipe.set({ title: "Soup", servings: "two" })
    // @ts-expect-error update must answer a whole state
    recipe.update((r) => ({ title: r.title }))
  })

  it("requires the initial state to be a state", () => {
    // @ts-expect-error the initial state is missing servings
    agUiState("recipe", Recipe, { initial: { title: "" } })
  })

  it("leaves a tool using it (and its agent) without requirements, so agUiHandler takes the agent", () => {
    const recipe = agUiState("recipe", Recipe)
    const rename = tool("rename", { args: Schema.Struct({ title: Schema.String }), run: ({ title }) => recipe.update((r) => ({ ...r, title })).pipe(Effect.as("ok")) })
    const chef = agent("chef").model(scriptedModel([])).tools({ rename })
    expectTypeOf(agUiHandler(chef, { state: recipe })).toEqualTypeOf<(request: Request) => Promise<Response>>()
  })
})
