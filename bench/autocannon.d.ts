// The part of autocannon's programmatic API the bench uses (the package ships no types).
declare module "autocannon" {
  interface Options {
    readonly url: string
    readonly method?: string
    readonly headers?: Record<string, string>
    readonly body?: string
    readonly connections?: number
    readonly duration?: number
    readonly requests?: ReadonlyArray<{
      readonly setupRequest?: (request: Request) => Request
    }>
  }
  interface Request {
    readonly method?: string
    readonly path?: string
    readonly headers?: Record<string, string>
    readonly body?: string
  }
  interface Histogram {
    readonly average: number
    readonly p50: number
    readonly p99: number
    readonly total: number
  }
  interface Result {
    readonly requests: Histogram
    readonly latency: Histogram
    readonly errors: number
    readonly timeouts: number
    readonly non2xx: number
  }
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
