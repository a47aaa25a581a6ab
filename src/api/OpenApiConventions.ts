import type * as OpenApi from "@effect/platform/OpenApi"

/**
 * FastAPI conventions applied to the generated OpenAPI document, derived from the HttpApi
 * definition rather than written per endpoint:
 *
 * - operation ids as FastAPI generates them: `<function>_<path>_<method>`, the function being the
 *   endpoint name in snake case (`getWebClientConfig` on `GET /api/v1/web-client/config` gives
 *   `get_web_client_config_api_v1_web_client_config_get`);
 * - request validation fails with 422 `HTTPValidationError`, declared only on operations that take
 *   input, and never with Effect's 400 `HttpApiDecodeError` (Hangar maps those to 422).
 */
export const fastApiConventions = (document: Record<string, any>): Record<string, any> => {
  const spec = document as OpenApi.OpenAPISpec
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(item) as Array<[string, OpenApi.OpenAPISpecOperation]>) {
      operation.operationId = operationId(operation.operationId, path, method)
      delete operation.responses[400]
      const takesInput = operation.parameters.length > 0 || operation.requestBody !== undefined
      if (!takesInput) {
        delete operation.responses[422]
      }
    }
  }
  for (const name of ["HttpApiDecodeError", "Issue", "PropertyKey"]) {
    delete spec.components.schemas[name]
  }
  return spec
}

const snakeCase = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase()

const operationId = (current: string, path: string, method: string) => {
  const endpoint = current.slice(current.lastIndexOf(".") + 1)
  return `${snakeCase(endpoint)}${path}`.replace(/\W/g, "_") + `_${method}`
}
