import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RampartClient
import FileVault
import RampartCore
import RampartRuntime

/// The drive page: browse, upload (streamed to a private lease file, then encrypted and uploaded
/// in blocks; the page's script shows the progress), download, rename (a new sealed revision of
/// the name) and delete.
///
/// Trust-model row **cleartext files (critical)**: an upload's or download's cleartext exists
/// only in a 0600 file of this process's preview session while it is encrypted or sent, and is
/// removed right after (and by the cleartext sweep at lock, or at the next start if the process
/// dies).
struct DriveRoutes {
    let app: WebApp
    /// The largest upload accepted from the browser.
    static let maximumUpload = 1 << 30

    func register(_ router: Router<WebContext>) {
        router.get("/drive") { _, context in
            try await app.page(context) { session, csrf in
                let entries = try await session.withAPI { try await DriveClient(account: session.account).list(api: $0) }
                var rows = ""
                for (index, entry) in entries.enumerated() where !entry.isFolder {
                    let path = WebPage.escape(MailRoutes.pathComponent(entry.id))
                    let rename = "<label for=\"rename-\(index)\">New name for \(WebPage.escape(entry.name))</label> "
                        + "<input id=\"rename-\(index)\" name=\"name\" value=\"\(WebPage.escape(entry.name))\" required> "
                    rows += "<li><a href=\"/drive/file/\(path)\" download>\(WebPage.escape(entry.name))</a> (\(entry.size) bytes) "
                        + WebPage.button("Rename", action: "/drive/rename/\(entry.id)", csrf: csrf, extra: rename)
                        + WebPage.button("Delete \(entry.name)", action: "/drive/delete/\(entry.id)", csrf: csrf) + "</li>"
                }
                let body = """
                <h1>Drive</h1><form id="upload-form"><label for="upload-file">Upload a file</label> \
                <input id="upload-file" type="file" required> <button type="submit">Upload</button> \
                <progress id="upload-progress" max="100" value="0" aria-label="Upload progress"></progress> \
                <span id="upload-status" role="status" aria-live="polite"></span></form>\
                <ul id="drive-files">\(rows.isEmpty ? "<li>No files.</li>" : rows)</ul>\
                <p>Folders are not in this version of the web app.</p>
                """
                return WebHeaders.html(WebPage.document(title: "Drive", csrf: csrf, page: "drive", body: body))
            }
        }
        router.put("/drive/upload") { request, context in
            try await app.page(context) { session, _ in
                let name = Self.fileName(request.uri.queryParameters.get("name") ?? "")
                let folder = try Self.privateFolder(session)
                defer { Self.erase(folder) }
                let file = folder.appendingPathComponent(name)
                try await Self.receive(request, into: file, limit: Self.maximumUpload)
                let entry = try await session.withAPI { try await DriveClient(account: session.account).upload(file, api: $0) }
                return WebHeaders.json("{\"id\":\(ComposeRoutes.jsonString(entry.id)),\"size\":\(entry.size)}")
            }
        }
        // Rename and delete change state: POSTs of the page's forms, with the CSRF token (WebGuard).
        router.post("/drive/rename/:id") { _, context in
            let id = try context.parameters.require("id")
            return try await app.page(context) { session, _ in
                _ = try await session.withAPI { try await DriveClient(account: session.account).renameFile(id, to: context.field("name") ?? "", api: $0) }
                return WebHeaders.redirect("/drive")
            }
        }
        router.post("/drive/delete/:id") { _, context in
            let id = try context.parameters.require("id")
            return try await app.page(context) { session, _ in
                try await session.withAPI { try await DriveClient(account: session.account).deleteFile(id, api: $0) }
                return WebHeaders.redirect("/drive")
            }
        }
        router.get("/drive/file/:id") { _, context in
            let id = try context.parameters.require("id")
            return try await app.page(context) { session, _ in
                let folder = try Self.privateFolder(session)
                defer { Self.erase(folder) }
                let file = folder.appendingPathComponent("download")
                let entry = try await session.withAPI { try await DriveClient(account: session.account).download(id, to: file, api: $0) }
                var data = try Data(contentsOf: file)
                defer { data.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
                return MailRoutes.download(data, name: entry.name)
            }
        }
    }

    /// Streams a request's body into a new 0600 file, at most `limit` bytes (413 beyond).
    static func receive(_ request: Request, into file: URL, limit: Int) async throws {
        guard FileManager.default.createFile(atPath: file.path, contents: nil, attributes: [.posixPermissions: 0o600]),
              let out = try? FileHandle(forWritingTo: file) else { throw HTTPError(.internalServerError, message: "Cannot write the upload.") }
        defer { try? out.close() }
        var total = 0
        for try await buffer in request.body {
            total += buffer.readableBytes
            guard total <= limit else { throw HTTPError(.contentTooLarge, message: "The file is larger than \(limit) bytes.") }
            out.write(Data(buffer.readableBytesView))
        }
    }

    /// A file name without folders or control characters.
    static func fileName(_ text: String) -> String {
        let base = (text as NSString).lastPathComponent.unicodeScalars.filter { $0.value >= 0x20 && $0 != "/" && $0 != "\\" }
        let name = String(String.UnicodeScalarView(base)).trimmingCharacters(in: .whitespaces)
        return name.isEmpty || name == "." || name == ".." ? "upload" : String(name.prefix(200))
    }

    /// A fresh 0700 folder in this process's own preview session (FileVault's `PreviewArea`): its
    /// owner lock keeps other processes' start-up sweeps away from it, and a lock of the account
    /// (`rampart lock`, autolock) erases it with every other cleartext preview.
    static func privateFolder(_ session: AccountSession) throws -> URL {
        try session.webScratchFolder()
    }

    static func erase(_ folder: URL) {
        try? FileManager.default.removeItem(at: folder)
    }
}
