import Foundation
import RampartAPI
import Testing

/// The wire contract alone (no crypto, no conversion: those are MailboxCrypto's): the names both
/// sides bind parts to, the paths, the id shapes, and the JSON field names of an import.
@Suite("Wire contract: part names, routes, id shapes, JSON field names")
struct WireContractTests {
    @Test func partNamesAndRoutesAreTheOnesBothSidesUse() {
        #expect(SealedPartName.body == "body")
        #expect(SealedPartName.attachment(3) == "attachment:3")
        #expect(SealedPartName.original == "original")
        #expect(APIRoute.messageOriginal("mi_1") == "/v1/messages/mi_1/original")
        #expect(APIRoute.importMessage == "/v1/mail/import")
        #expect(APIRoute.importKnown == "/v1/mail/import/known")
    }

    @Test func idShapes() {
        let hex32 = String(repeating: "0a", count: 16)
        #expect(WireID.hasShape("mi_" + hex32, prefix: "mi_", hexDigits: 32))
        #expect(!WireID.hasShape("mi_" + hex32.uppercased(), prefix: "mi_", hexDigits: 32))
        #expect(!WireID.hasShape("mi_" + hex32 + "0", prefix: "mi_", hexDigits: 32))
        #expect(!WireID.hasShape("ai_" + hex32, prefix: "mi_", hexDigits: 32))
        #expect(SendRequest.isSubmissionID(SendRequest.newID()))
        #expect(!SendRequest.isSubmissionID("ms_1"))
        #expect(DriveNodeRequest.isID(DriveNodeRequest.newID("n"), prefix: "n"))
        #expect(!DriveNodeRequest.isID("n" + hex32, prefix: "n"))
    }

    @Test func anImportRequestKeepsItsFieldNamesThroughJSON() throws {
        let request = ImportRequest(id: "mi_1", time: 7, labelIds: ["inbox"], unread: true, size: 3, sealedBody: "Ym9keQ==",
                                    sealedOriginal: "b3JpZw==",
                                    attachments: [ImportAttachment(id: "ai_1", name: "a.txt", mimeType: "text/plain", size: 1,
                                                                   contentId: nil, sealedData: "YQ==")])
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(request)) as? [String: Any]
        #expect(Set(json?.keys.map { $0 } ?? []) == ["id", "time", "labelIds", "unread", "size", "sealedBody", "sealedOriginal", "attachments"])
        let again = try JSONDecoder().decode(ImportRequest.self, from: JSONEncoder().encode(request))
        #expect(again.id == request.id && again.attachments == request.attachments && again.sealedOriginal == request.sealedOriginal)
    }
}
