import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RampartClient
import FileVault
import RampartCore
import RampartRuntime

/// The drive page: browse folders (into and up), create folders, upload into the current folder
/// (streamed to a private lease file, then encrypted and uploaded in blocks; the page's script
/// shows the progress), download, rename (a new sealed revision of the name) and delete (a folder
/// only when it is empty: one with something in it is refused with a message saying so).
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
        router.get("/drive") { request, context in
            try await app.page(context) { session, csrf in
                try await folderPage(request.uri.queryParameters.get("folder").flatMap { $0.isEmpty ? nil : String($0) }, session, csrf)
            }
        }
        router.put("/drive/upload") { request, context in
            try await app.page(context) { session, _ in
                let name = Self.fileName(request.uri.queryParameters.get("name") ?? "")
                let into = request.uri.queryParameters.get("folder").flatMap { $0.isEmpty ? nil : String($0) }
                let folder = try Self.privateFolder(session)
                defer { Self.erase(folder) }
                let file = folder.appendingPathComponent(name)
                try await Self.receive(request, into: file, limit: Self.maximumUpload)
                let entry = try await session.withAPI { try await DriveClient(account: session.account).upload(file, into: into, api: $0) }
                return WebHeaders.json("{\"id\":\(ComposeRoutes.jsonString(entry.id)),\"size\":\(entry.size)}")
            }
        }
        // New folder, rename and delete change state: POSTs of the page's forms, with the CSRF
        // token (WebGuard); each goes back to the folder the form was in.
        router.post("/drive/mkdir") { _, context in
            try await app.page(context) { session, _ in
                let parent = Self.currentFolder(context)
                _ = try await session.withAPI { try await DriveClient(account: session.account).createFolder(context.field("name") ?? "", in: parent, api: $0) }
                return WebHeaders.redirect(Self.folderURL(parent))
            }
        }
        router.post("/drive/rename/:id") { _, context in
            let id = try context.parameters.require("id")
            return try await app.page(context) { session, _ in
                _ = try await session.withAPI { try await DriveClient(account: session.account).renameFile(id, to: context.field("name") ?? "", api: $0) }
                return WebHeaders.redirect(Self.folderURL(Self.currentFolder(context)))
            }
        }
        router.post("/drive/delete/:id") { _, context in
            let id = try context.parameters.require("id")
            return try await app.page(context) { session, _ in
                try await session.withAPI { try await DriveClient(account: session.account).deleteFile(id, api: $0) }
                return WebHeaders.redirect(Self.folderURL(Self.currentFolder(context)))
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

    /// The drive page of `folder` (nil: the root folder): where it is and the way up, its folders
    /// then its files, each with rename and delete, and the forms for a new folder and an upload.
    func folderPage(_ folder: String?, _ session: AccountSession, _ csrf: String) async throws -> Response {
        let drive = DriveClient(account: session.account)
        let (entries, current, parent) = try await session.withAPI { api -> ([DriveEntry], DriveEntry?, DriveEntry?) in
            guard let folder else { return (try await drive.list(api: api), nil, nil) }
            return (try await drive.list(in: folder, api: api), try await drive.folderEntry(folder, api: api), try await drive.parent(of: folder, api: api))
        }
        let here = "<input type=\"hidden\" name=\"folder\" value=\"\(WebPage.escape(folder ?? ""))\">"
        var rows = ""
        for (index, entry) in entries.sorted(by: { $0.isFolder && !$1.isFolder }).enumerated() {
            let path = WebPage.escape(MailRoutes.pathComponent(entry.id))
            let rename = "<label for=\"rename-\(index)\">New name for \(WebPage.escape(entry.name))</label> "
                + "<input id=\"rename-\(index)\" name=\"name\" value=\"\(WebPage.escape(entry.name))\" required> " + here
            let link = entry.isFolder
                ? "<a href=\"\(WebPage.escape(Self.folderURL(entry.id)))\" class=\"folder\">\(WebPage.escape(entry.name))/</a> (folder) "
                : "<a href=\"/drive/file/\(path)\" download>\(WebPage.escape(entry.name))</a> (\(entry.size) bytes) "
            rows += "<li\(entry.isFolder ? " class=\"folder\"" : "")>" + link
                + WebPage.button("Rename", action: "/drive/rename/\(entry.id)", csrf: csrf, extra: rename)
                + WebPage.button("Delete \(entry.name)", action: "/drive/delete/\(entry.id)", csrf: csrf, extra: here) + "</li>"
        }
        let title = current.map { "Drive: \($0.name)" } ?? "Drive"
        let up = folder == nil ? "" : "<p><a href=\"\(WebPage.escape(Self.folderURL(parent?.id)))\" id=\"folder-up\">Up to \(WebPage.escape(parent?.name ?? "Drive"))</a></p>"
        let body = """
        <h1 id="drive-title">\(WebPage.escape(title))</h1>\(up)\
        <form id="upload-form" data-folder="\(WebPage.escape(folder ?? ""))"><label for="upload-file">Upload a file</label> \
        <input id="upload-file" type="file" required> <button type="submit">Upload</button> \
        <progress id="upload-progress" max="100" value="0" aria-label="Upload progress"></progress> \
        <span id="upload-status" role="status" aria-live="polite"></span></form>\
        \(WebPage.button("Create folder", action: "/drive/mkdir", csrf: csrf, id: "mkdir-button",
                        extra: "<label for=\"new-folder\">New folder</label> <input id=\"new-folder\" name=\"name\" required> " + here))\
        <ul id="drive-files">\(rows.isEmpty ? "<li>No files.</li>" : rows)</ul>\
        <p>A folder is deleted only when it is empty.</p>
        """
        return WebHeaders.html(WebPage.document(title: title, csrf: csrf, page: "drive", body: body))
    }

    /// The folder a form was sent from (its hidden `folder` field; empty: the root folder).
    static func currentFolder(_ context: WebContext) -> String? {
        context.field("folder").flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `/drive` or `/drive?folder=ID`.
    static func folderURL(_ folder: String?) -> String {
        folder.map { "/drive?folder=" + MailRoutes.pathComponent($0) } ?? "/drive"
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
