/** Types of scripts/docs-examples.mjs, for test/docs/examples.test.ts. */
export declare const root: string
export declare const markdownFiles: () => ReadonlyArray<string>
export interface CodeBlock {
  readonly lang: string
  readonly flags: ReadonlyArray<string>
  readonly line: number
  readonly code: string
}
export declare const extractBlocks: (markdown: string) => ReadonlyArray<CodeBlock>
export declare const checkExamples: (options?: { readonly files?: ReadonlyArray<string> }) => Promise<{ readonly count: number; readonly problems: ReadonlyArray<string> }>
