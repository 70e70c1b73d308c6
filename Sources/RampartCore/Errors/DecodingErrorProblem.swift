import Foundation

extension DecodingError {
    /// What a JSON decoding failure says about a field, in words for an error message a person
    /// can act on: a missing field, a field of the wrong type, or an invalid field (named by its
    /// path). `nil` when `error` names no field (the document is not JSON, or not a
    /// `DecodingError` at all): the caller says that in its own words.
    ///
    /// Trust-model row **transport (network), low trust**: input from outside is refused with a
    /// precise reason that echoes field names only, never values.
    public static func fieldProblem(in error: any Error) -> String? {
        guard let decoding = error as? DecodingError else { return nil }
        switch decoding {
        case .keyNotFound(let key, _):
            return "the field \"\(key.stringValue)\" is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "a field has the wrong type at \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\""
        case .dataCorrupted(let context) where !context.codingPath.isEmpty:
            return "the field \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\" is invalid"
        default:
            return nil
        }
    }
}
