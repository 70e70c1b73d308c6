import RampartCore

/// Errors of the runtime's own input handling: options and standard input.
public enum RuntimeError: Error, RampartError, Equatable {
    /// An option or an input cannot be used; the text says why.
    case badInput(String)
    /// A value expected on standard input did not come.
    case missingStdin(String)

    public var code: String {
        switch self {
        case .badInput: "cli.badInput"
        case .missingStdin: "cli.missingStdin"
        }
    }

    public var kind: RampartErrorKind { .badInput }

    public var description: String {
        switch self {
        case .badInput(let why): why
        case .missingStdin(let what): "Expected \(what) on standard input, got nothing."
        }
    }
}
