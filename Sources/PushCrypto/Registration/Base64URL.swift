import Foundation

/// Base64url without padding (RFC 4648 §5), the encoding Web Push uses for keys and secrets.
public enum Base64URL {
    /// Encodes `bytes` as unpadded base64url.
    public static func encode<Bytes: ContiguousBytes>(_ bytes: Bytes) -> String {
        let data = bytes.withUnsafeBytes { Data($0) }
        return data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes base64url, with or without padding; returns nil for anything else.
    public static func decode(_ text: String) -> [UInt8]? {
        guard text.utf8.allSatisfy({ byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F || byte == 0x3D
        }) else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard = standard.replacingOccurrences(of: "=", with: "")
        if standard.utf8.count % 4 == 1 { return nil }
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: standard) else { return nil }
        return [UInt8](data)
    }
}
