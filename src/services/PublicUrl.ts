import * as Context from "effect/Context"

/**
 * The base URL agent servers reach Hangar at (`HANGAR_PUBLIC_URL`, else this server's own
 * loopback address once it listens), without a trailing slash.
 */
export class PublicUrl extends Context.Tag("hangar/PublicUrl")<PublicUrl, { readonly url: string }>() {}
