import Foundation
import Hummingbird
import NIOCore
import RampartAPI

/// The remote-content proxy's route, `POST /v1/remote/fetch` (registered with the mail routes,
/// behind ``SessionMiddleware``).
///
/// Trust-model row **inbox (low) — IP disclosure by remote content**: a signed-in reader's app
/// asks the backend for a remote image or font of a message it allowed remote content for; the
/// backend fetches it with ``RemoteFetcher`` (its own address, no cookie, `Referer` or header of
/// the reader's; public destinations only; images and fonts of at most 5 MiB) and answers with
/// the bytes, `nosniff` and a sandboxing CSP. The request log names the route and the status,
/// never the URL.
extension RemoteFetcher {
    func answer(_ request: Request) async throws -> Response {
        let asked = try await APIIO.decode(RemoteFetchRequest.self, from: request, limit: 16 * 1024)
        let fetched: Fetched
        do { fetched = try await fetch(asked.url) } catch { throw ServerError.remoteFetchRefused(error) }
        return Response(status: .ok, headers: [.contentType: fetched.contentType, .cacheControl: "no-store",
                                               .xContentTypeOptions: "nosniff", .contentSecurityPolicy: "default-src 'none'; sandbox"],
                        body: .init(byteBuffer: ByteBuffer(bytes: fetched.body)))
    }
}
