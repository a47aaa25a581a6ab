import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { SandboxId } from "../domain/Sandbox.js"
import { requestBody } from "./Bodies.js"
import { ConflictResponse, NotFoundResponse } from "./Errors.js"
import { Authentication } from "./Security.js"

export class CreateDirectoryRequest extends Schema.Class<CreateDirectoryRequest>("CreateDirectoryRequest")({
  sandbox_id: SandboxId.pipe(Schema.maxLength(128)),
  path: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(4096)).annotations({
    description: "Relative to the workspace; absolute paths and paths leading outside it are refused"
  })
}, requestBody("CreateDirectoryRequest")) {}

export class DirectoryCreated extends Schema.Class<DirectoryCreated>("DirectoryCreated")({
  success: Schema.Literal(true),
  path: Schema.String.annotations({ description: "The directory, relative to the workspace (empty: the workspace)" })
}) {}

export class FilesApi extends HttpApiGroup.make("files")
  .add(
    HttpApiEndpoint.post("createDirectory", "/file/create_directory")
      .setPayload(CreateDirectoryRequest)
      .addSuccess(DirectoryCreated)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .annotateContext(OpenApi.annotations({
        summary: "Create Directory",
        description: "Creates a directory, and its missing parents, in the workspace of one of the caller's sandboxes. " +
          "Idempotent. The path is resolved and must stay inside the workspace: `..` leading out, absolute paths and " +
          "symbolic links pointing out are 422; a file in the way is 409."
      }))
  )
  .middleware(Authentication)
  .annotateContext(OpenApi.annotations({ title: "Files", description: "The files of a sandbox's workspace" }))
{}
