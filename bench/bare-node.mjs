// The floor: what Node itself does for GET /api/v1/web-client/config, a prepared body and nothing
// else. The body is the one Hangar serves (the bench passes it in a file).
import { readFileSync } from "node:fs"
import { createServer } from "node:http"

const body = readFileSync(process.env.BENCH_CONFIG_BODY)
const server = createServer((request, response) => {
  if (request.method === "GET" && request.url === "/api/v1/web-client/config") {
    response.writeHead(200, { "content-type": "application/json", "content-length": body.length })
    response.end(body)
  } else {
    response.writeHead(404, { "content-type": "application/json" })
    response.end("{\"detail\":\"Not Found\"}")
  }
})
server.listen(Number(process.env.PORT), "127.0.0.1", () => console.log("listening"))
process.on("SIGTERM", () => server.close(() => process.exit(0)))
