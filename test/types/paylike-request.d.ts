// The part of Paylike's request library (npm @paylike/request, CommonJS, no types of its own) the tests use.
declare module '@paylike/request' {
  interface PaylikeRequestOptions {
    version: number
    data?: Record<string, unknown>
    fetch: typeof fetch
    timeout?: number
  }
  interface PaylikeRequest {
    (endpoint: string, options: PaylikeRequestOptions): { first(): Promise<Record<string, unknown>> }
    ResponseError: new (...args: never[]) => Error
  }
  const request: PaylikeRequest
  export default request
}
