import Foundation
import Hummingbird
import NIOCore
import RampartAPI
import RampartCore

/// Reading requests and writing responses the same way on every route: bounded bodies, JSON
/// decoding errors as ``ServerError/malformedJSON(_:)``, sorted-key JSON and `no-store` answers.
///
/// Trust-model row **transport (network), low trust**: a body over its limit is refused before it
/// is read in full, and a JSON request body is zeroized once decoded (it may hold a password).
enum APIIO {
    /// The largest JSON body accepted (a send with attachments included).
    static let maximumJSONBody = 16 * 1024 * 1024


    static func body(_ request: Request, limit: Int) async throws -> Data {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw ServerError.payloadTooLarge(limit: limit)
        }
        do {
            let buffer = try await request.body.collect(upTo: limit)
            return Data(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            throw ServerError.payloadTooLarge(limit: limit)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw ServerError.payloadTooLarge(limit: limit)
        }
    }

    /// The JSON body as a `T`, read up to `limit` bytes; the bytes read are zeroized afterwards (a
    /// body may carry a password or an SRP proof).
    static func decode<T: Decodable>(_ type: T.Type, from request: Request, limit: Int = maximumJSONBody) async throws -> T {
        var data = try await body(request, limit: limit)
        defer { data.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        guard !data.isEmpty else { throw ServerError.malformedJSON("the body is empty") }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw ServerError.malformedJSON(DecodingError.fieldProblem(in: error) ?? "the body is not JSON")
        }
    }

    static func integer(_ request: Request, _ name: String, default value: Int64, range: ClosedRange<Int64>) throws -> Int64 {
        guard let text = request.uri.queryParameters.get(name) else { return value }
        guard let number = Int64(text), range.contains(number) else {
            throw ServerError.badRequest("the query parameter \"\(name)\" must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try encoder.encode(value)
        return Response(status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                        body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func binary(_ data: Data) -> Response {
        Response(status: .ok, headers: [.contentType: "application/octet-stream", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func errorResponse(_ status: HTTPResponse.Status, _ body: APIErrorBody) -> Response {
        var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store"]
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer" }
        let data = (try? encoder.encode(body)) ?? Data()
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
