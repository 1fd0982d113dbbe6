/** The adapters' last step lives in the protocol layer now (streams assemble responses too); re-exported here for the adapters. */
export { assembleResponse } from "../model/assemble-response.ts"
