/**
 * The provider SDKs are optional peer dependencies: a provider whose SDK is not installed fails when
 * it is built, with an `AgentConfigError` that names the package and the command that installs it
 * (not a bare `Cannot find module`). The SDKs are installed in this repo, so the loader is asked for
 * packages that are not; the packed-package test checks `openai(...)` in a project without `openai`.
 */
import { describe, expect, it } from "vitest"
import { lazyPackage } from "../../src/internal/lazy-package.ts"

describe("a provider SDK that is not installed", () => {
  it("names the package and how to install it", () => {
    const sdk = lazyPackage<unknown>("@not-installed/provider-sdk/sub/path")
    expect(() => sdk()).toThrow(/the package "@not-installed\/provider-sdk" is not installed; .*optional peer dependency of effect-agent-dsl: npm install @not-installed\/provider-sdk$/)
    const plain = lazyPackage<unknown>("not-installed-provider-sdk")
    expect(() => plain()).toThrow(/npm install not-installed-provider-sdk$/)
  })

  it("passes on other failures of a package that is there", () => {
    // A package that exists but refuses to load keeps its own error (here: a subpath it does not export).
    const broken = lazyPackage<unknown>("openai/not-a-real-subpath")
    expect(() => broken()).toThrow(/not-a-real-subpath/)
    expect(() => broken()).not.toThrow(/is not installed/)
  })
})
